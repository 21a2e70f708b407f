// fiber-ppo: Proximal Policy Optimization on a fiber pool.
//
//   fiberrun ./fiber-ppo --config apps/ppo/configs/cartpole.toml
//   fiberrun ./fiber-ppo --env Pendulum-v1 --total-timesteps 1000000 --resume auto
#include <fiber/fiber.hpp>

#include "options.hpp"
#include "run/stop_request.hpp"
#include "trainer.hpp"

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);  // workers stop here and serve tasks
  fiber::rl::install_stop_handlers();  // SIGTERM, SIGINT: checkpoint, exit 75 (stop_request.hpp)
  return fiber::ppo::train(fiber::ppo::parse_options(argc, argv));
}
