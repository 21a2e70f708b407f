// fiber-ppo: Proximal Policy Optimization on a fiber pool.
//
//   fiberrun ./fiber-ppo --config apps/ppo/configs/cartpole.toml
//   fiberrun ./fiber-ppo --env Pendulum-v1 --total-timesteps 1000000 --resume auto
#include "options.hpp"
#include "run/application_main.hpp"
#include "trainer.hpp"

int main(int argc, char** argv) {
  // The runtime first (workers stop there and serve tasks); SIGTERM, SIGINT: checkpoint, exit 75.
  return fiber::rl::application_main("fiber-ppo", argc, argv, [&] {
    return fiber::ppo::train(fiber::ppo::parse_options(argc, argv));
  });
}
