// fiber-ppo's options: TOML files in apps/ppo/configs/ (--config), overridden by flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/command_line.hpp"
#include "run/rollout_log_start.hpp"

namespace fiber::ppo {

struct Options {
  std::string environment = "CartPole-v1";
  std::int64_t total_timesteps = 500'000;  // environment steps of training (rounded down to
                                           // whole iterations of environments * steps)
  int environments = 4;                    // environment slots: one segment task each
  int steps = 128;                         // steps per environment per iteration
  double learning_rate = 2.5e-4;
  bool anneal_learning_rate = true;  // linearly to 0 over the run
  double gamma = 0.99;
  double gae_lambda = 0.95;
  int epochs = 4;
  int minibatches = 4;
  double clip = 0.2;
  double value_coefficient = 0.5;
  double entropy_coefficient = 0.01;
  double max_gradient_norm = 0.5;
  bool normalize_advantages = true;
  bool normalize_observations = false;
  bool normalize_rewards = false;
  double initial_log_std = 0.0;  // continuous actions
  std::vector<long> hidden{64, 64};
  std::uint64_t seed = 1;
  int eval_every = 10;  // iterations between evaluations of the deterministic policy (0: never)
  int eval_episodes = 10;
  double target_return = 0;  // stop once the eval mean reaches it (with --stop-at-target)
  bool stop_at_target = false;
  int workers = 0;                  // 0: one per slot
  bool park_during_update = false;  // shrink the pool to 0 while the master updates
  int learner_cores = 1;   // 1: the update in the master; N > 1: on a learner worker of N cores
  int step_sleep_us = 0;   // simulated cost per environment step, slept (benchmarks)
  bool overwrite = false;  // may replace any file at --output and --checkpoint
  rl::RunFiles files{"ppo-run.h5"};
  rl::RolloutLevel rollout_log = rl::RolloutLevel::full;  // OUTPUT.rollouts.h5, OUTPUT.tasks.h5
  double task_timeout = rl::kDefaultTaskTimeoutSeconds;   // seconds a task may run; 0: no limit
  std::int64_t stop_after = 0;  // stop (with a checkpoint) once this many iterations are done
  std::string config_text;      // the effective configuration, for the run log

  int batch_size() const { return environments * steps; }
  std::int64_t iterations() const { return total_timesteps / batch_size(); }
};

// Parses the command line; on --help prints and exits 0; on a bad option or value prints one
// line and exits 2.
Options parse_options(int argc, char** argv);

}  // namespace fiber::ppo
