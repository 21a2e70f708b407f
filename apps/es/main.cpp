// fiber-es: Evolution Strategies (OpenAI-ES) on a fiber pool.
//
//   fiberrun ./fiber-es --config apps/es/configs/cartpole.toml
//   fiberrun ./fiber-es --env Pendulum-v1 --generations 200 --resume auto
#include "options.hpp"
#include "run/application_main.hpp"
#include "trainer.hpp"

int main(int argc, char** argv) {
  // The runtime first (workers stop there and serve tasks); SIGTERM, SIGINT: checkpoint, exit 75.
  return fiber::rl::application_main("fiber-es", argc, argv, [&] {
    return fiber::es::train(fiber::es::parse_options(argc, argv));
  });
}
