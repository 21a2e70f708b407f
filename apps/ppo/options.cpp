#include "options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <thread>

#include "envs/environment.hpp"
#include "run/network_memory.hpp"

namespace fiber::ppo {
namespace {

constexpr int kMaxLearnerCores = 4096;  // a bound for the flag's range; a node's cores check it

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  CLI::App app{
      "fiber-ppo: Proximal Policy Optimization with rollouts on a fiber pool. Options come from a\n"
      "TOML file (--config, see apps/ppo/configs/) and flags, flags winning.",
      "fiber-ppo"};
  app.set_config("--config", "",
                 "TOML file with any of the options below (keys as the long "
                 "names without dashes, e.g. learning-rate = 0.001)");
  app.allow_config_extras(false);
  std::string names;
  for (const auto& name : rl::environment_names()) names += (names.empty() ? "" : ", ") + name;
  const auto unit_interval = rl::in_range(0.0, 1.0);
  app.add_option("--env", o.environment, "environment: " + names)->capture_default_str();
  app.add_option("--total-timesteps", o.total_timesteps,
                 "environment steps to train for (in all, with --resume)")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--envs", o.environments,
                 "environment slots; each iteration runs one segment task per slot")
      ->check(rl::in_range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--steps", o.steps, "steps per environment per iteration (segment length)")
      ->check(rl::in_range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--learning-rate", o.learning_rate, "Adam stepsize")
      ->check(rl::positive())
      ->capture_default_str();
  rl::add_switch(app, "--anneal-learning-rate,!--no-anneal-learning-rate", o.anneal_learning_rate,
                 "decrease the learning rate linearly to 0 over the run");
  app.add_option("--gamma", o.gamma, "discount factor")
      ->check(unit_interval)
      ->capture_default_str();
  app.add_option("--gae-lambda", o.gae_lambda, "GAE lambda")
      ->check(unit_interval)
      ->capture_default_str();
  app.add_option("--epochs", o.epochs, "passes over an iteration's samples")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--minibatches", o.minibatches, "minibatches per epoch")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--clip", o.clip, "ratio clipping range of the surrogate objective")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--value-coefficient", o.value_coefficient, "weight of the value loss")
      ->check(rl::non_negative())
      ->capture_default_str();
  app.add_option("--entropy-coefficient", o.entropy_coefficient, "weight of the entropy bonus")
      ->check(rl::non_negative())
      ->capture_default_str();
  app.add_option("--max-gradient-norm", o.max_gradient_norm,
                 "global gradient norm clipping (0: none)")
      ->check(rl::non_negative())
      ->capture_default_str();
  rl::add_switch(app, "--normalize-advantages,!--no-normalize-advantages", o.normalize_advantages,
                 "normalize advantages per minibatch");
  rl::add_switch(app, "--normalize-observations,!--no-normalize-observations",
                 o.normalize_observations, "running observation normalization");
  rl::add_switch(app, "--normalize-rewards,!--no-normalize-rewards", o.normalize_rewards,
                 "scale rewards by the running std of the discounted return");
  app.add_option("--initial-log-std", o.initial_log_std,
                 "initial log standard deviation of continuous actions")
      ->check(rl::in_range(-10.0, 10.0))
      ->capture_default_str();
  app.add_option("--hidden", o.hidden, "hidden layer sizes of the tanh MLPs (policy and value)")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the networks, environments and sampling")
      ->capture_default_str();
  app.add_option("--eval-every", o.eval_every,
                 "iterations between evaluations of the deterministic policy (0: never)")
      ->check(rl::non_negative())
      ->capture_default_str();
  app.add_option("--eval-episodes", o.eval_episodes, "episodes per evaluation")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--target-return", o.target_return, "the eval return that solves the task")
      ->check(rl::finite())
      ->capture_default_str();
  rl::add_switch(app, "--stop-at-target,!--no-stop-at-target", o.stop_at_target,
                 "stop once the eval return reaches --target-return");
  app.add_option("--workers", o.workers, "pool size; 0 = one per environment slot")
      ->check(rl::non_negative())
      ->capture_default_str();
  rl::add_switch(app, "--park-during-update,!--no-park-during-update", o.park_during_update,
                 "park the workers (pool size 0) while the master updates the networks");
  app.add_option("--learner-cores", o.learner_cores,
                 "cores of the update: 1 runs it in the master; N > 1 on a learner, a worker "
                 "bound to N cores of its node, on N threads (the same results for any N)")
      ->check(rl::in_range(1, kMaxLearnerCores))
      ->capture_default_str();
  app.add_option("--step-sleep-us", o.step_sleep_us,
                 "simulated cost of an environment step in microseconds, slept at the end of "
                 "each segment and evaluation episode: a controlled rollout cost for scaling "
                 "benchmarks (0: none)")
      ->check(rl::in_range(0, 10'000'000))
      ->capture_default_str();
  rl::add_run_files(app, o.files, "iteration");
  rl::add_rollout_log(app, o.rollout_log,
                      "rollout logs: 'full' (OUTPUT with .rollouts.h5, one row per finished "
                      "episode, and with .tasks.h5, one row per segment), 'summary' (.tasks.h5 "
                      "only), or 'off'");
  app.add_flag("--overwrite", o.overwrite,
               "replace the file at --output (a new run) and at --checkpoint, whatever it holds "
               "(otherwise refused: an earlier run's log, another run's checkpoint, any other "
               "file); regular files only");
  rl::add_task_timeout(app, o.task_timeout, "a task (one slot's segment or evaluation episodes)");
  app.add_option("--stop-after", o.stop_after,
                 "stop (with a checkpoint) once this many iterations are done, the schedule "
                 "still set by --total-timesteps: a long run in pieces (0: run to the end)")
      ->check(rl::non_negative())
      ->capture_default_str();
  rl::parse_or_exit(app, o.files, argc, argv);
  auto known = rl::environment_names();
  if (std::find(known.begin(), known.end(), o.environment) == known.end()) {
    rl::reject(app, "unknown environment '" + o.environment + "'; known: " + names);
  }
  auto environment = rl::make_environment(o.environment);
  const auto& space = environment->action_space();
  std::vector<long> policy{environment->observation_size()};
  policy.insert(policy.end(), o.hidden.begin(), o.hidden.end());
  std::vector<long> value = policy;
  policy.push_back(space.size);
  value.push_back(1);
  double log_std = space.discrete ? 0 : space.size;
  // The master: the parameters, Adam's m and v, the gradient, the minibatch's gradient, the
  // broadcast parameters, their message and the copy kept for workers that join later. A worker:
  // the message in its MPI process and its task process, the parameters, the networks.
  constexpr int kMasterCopies = 8;
  constexpr int kWorkerCopies = 4;
  rl::check_network_memory(
      app, {.parameters = rl::mlp_parameters(policy) + log_std + rl::mlp_parameters(value),
            .master_copies = kMasterCopies,
            .worker_copies = kWorkerCopies,
            .workers = o.workers > 0 ? o.workers : o.environments});
  if (const unsigned cores = std::thread::hardware_concurrency();
      cores > 0 && static_cast<unsigned>(o.learner_cores) > cores) {
    rl::reject(app, "--learner-cores " + std::to_string(o.learner_cores) +
                        ": more than this node's " + std::to_string(cores) + " cores");
  }
  if (o.batch_size() / o.minibatches < 2) {
    rl::reject(app, "--minibatches " + std::to_string(o.minibatches) +
                        " leaves fewer than 2 samples per " +
                        "minibatch (envs * steps = " + std::to_string(o.batch_size()) + ")");
  }
  if (o.iterations() < 1) {
    rl::reject(app, "--total-timesteps " + std::to_string(o.total_timesteps) +
                        " is less than one iteration (envs * steps = " +
                        std::to_string(o.batch_size()) + ")");
  }
  o.config_text = app.config_to_str(true, false);
  return o;
}

}  // namespace fiber::ppo
