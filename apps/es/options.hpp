// fiber-es's options: TOML files in apps/es/configs/ (--config), overridden by flags.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run/command_line.hpp"
#include "run/rollout_log_start.hpp"

namespace fiber::es {

struct Options {
  std::string environment = "CartPole-v1";
  int generations = 100;
  int population = 256;         // perturbations per generation (antithetic: half as many pairs)
  int pairs_per_task = 4;       // antithetic pairs one task evaluates
  double sigma = 0.02;          // noise standard deviation
  double learning_rate = 0.01;  // Adam stepsize
  double l2 = 0.005;            // weight decay coefficient
  std::vector<long> hidden{64, 64};
  std::int64_t noise_size = 25'000'000;  // float32 entries of the shared noise table
  std::uint64_t noise_seed = 123;
  std::uint64_t seed = 0;
  int episodes_per_perturbation = 1;        // episodes averaged into one perturbation's return
  bool common_start_states = false;         // all perturbations of a generation see the same starts
  std::string continuous_actions = "clip";  // "clip" or "tanh" (squashed into the bounds)
  int eval_episodes = 5;                    // episodes of the mean policy per generation
  double target_return = 0;  // stop once the eval mean reaches it (with --stop-at-target)
  bool stop_at_target = false;
  bool normalize_observations = true;
  int workers = 0;         // 0: one per slot
  int step_sleep_us = 0;   // simulated cost per environment step, slept (scaling benchmarks)
  bool overwrite = false;  // a run may replace any file at --output and --checkpoint
  rl::RunFiles files{"es-run.h5"};
  rl::RolloutLevel rollout_log = rl::RolloutLevel::full;  // OUTPUT with .rollouts.h5
  double task_timeout = rl::kDefaultTaskTimeoutSeconds;   // seconds a task may run; 0: no limit
  double time_limit = 0;                                  // seconds for this invocation; 0: none
  std::string config_text;  // the effective configuration, for the run log
};

// Parses the command line; on --help prints and exits 0; on a bad option or value prints one
// line and exits 2.
Options parse_options(int argc, char** argv);

}  // namespace fiber::es
