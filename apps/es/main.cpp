// fiber-es: Evolution Strategies (OpenAI-ES) on a fiber pool.
//
//   fiberrun ./fiber-es --config apps/es/configs/cartpole.toml
//   fiberrun ./fiber-es --env Pendulum-v1 --generations 200 --resume auto
#include <fiber/fiber.hpp>

#include "options.hpp"
#include "run/stop_request.hpp"
#include "trainer.hpp"

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);  // workers stop here and serve tasks
  fiber::rl::install_stop_handlers();  // SIGTERM, SIGINT: checkpoint, exit 75 (stop_request.hpp)
  return fiber::es::train(fiber::es::parse_options(argc, argv));
}
