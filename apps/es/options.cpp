#include "options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>

#include "envs/environment.hpp"
#include "run/network_memory.hpp"

namespace fiber::es {

Options parse_options(int argc, char** argv) {
  Options o;
  CLI::App app{
      "fiber-es: OpenAI Evolution Strategies on a fiber pool. Options come from a TOML file\n"
      "(--config, see apps/es/configs/) and flags, flags winning.",
      "fiber-es"};
  app.set_config("--config", "",
                 "TOML file with any of the options below (keys as the long "
                 "names without dashes, e.g. learning-rate = 0.01)");
  app.allow_config_extras(false);
  std::string names;
  for (const auto& name : rl::environment_names()) names += (names.empty() ? "" : ", ") + name;
  app.add_option("--env", o.environment, "environment: " + names)->capture_default_str();
  app.add_option("--generations", o.generations, "generations to run (in all, with --resume)")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--population", o.population, "perturbations evaluated per generation (even)")
      ->check(rl::in_range(2, 10'000'000))
      ->capture_default_str();
  app.add_option("--pairs-per-task", o.pairs_per_task,
                 "antithetic pairs one task evaluates (episodes per task: twice this)")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--sigma", o.sigma, "standard deviation of the parameter noise")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--learning-rate", o.learning_rate, "Adam stepsize")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--l2", o.l2, "weight decay coefficient")
      ->check(rl::non_negative())
      ->capture_default_str();
  app.add_option("--hidden", o.hidden, "hidden layer sizes of the tanh MLP policy")
      ->check(rl::positive())
      ->capture_default_str();
  app.add_option("--noise-size", o.noise_size,
                 "float32 entries of the noise table, one copy per node (250000000 = 1 GB on a "
                 "cluster)")
      ->check(rl::in_range(1'000, 4'000'000'000))
      ->capture_default_str();
  app.add_option("--noise-seed", o.noise_seed, "seed of the noise table")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the policy and of the noise sampling")
      ->capture_default_str();
  app.add_option("--episodes-per-perturbation", o.episodes_per_perturbation,
                 "episodes (from different start states) averaged into each perturbation's return")
      ->check(rl::in_range(1, 1000))
      ->capture_default_str();
  rl::add_switch(app, "--common-start-states,!--no-common-start-states", o.common_start_states,
                 "every perturbation of a generation starts from the same states (common random "
                 "numbers: ranks compare policies, not starting luck)");
  app.add_option("--continuous-actions", o.continuous_actions,
                 "continuous action spaces: 'clip' the network's output to the bounds, or 'tanh' "
                 "to squash it into them")
      ->check(CLI::IsMember({"clip", "tanh"}))
      ->capture_default_str();
  app.add_option("--eval-episodes", o.eval_episodes,
                 "episodes of the unperturbed policy per generation")
      ->check(rl::non_negative())
      ->capture_default_str();
  app.add_option("--target-return", o.target_return, "the eval return that solves the task")
      ->check(rl::finite())
      ->capture_default_str();
  rl::add_switch(app, "--stop-at-target,!--no-stop-at-target", o.stop_at_target,
                 "stop once the eval return reaches --target-return");
  rl::add_switch(app, "--normalize-observations,!--no-normalize-observations",
                 o.normalize_observations, "running observation normalization (as OpenAI-ES)");
  app.add_option("--workers", o.workers, "pool size; 0 = one per processor slot")
      ->check(rl::non_negative())
      ->capture_default_str();
  app.add_option("--step-sleep-us", o.step_sleep_us,
                 "simulated cost of an environment step in microseconds, slept at the end of "
                 "each episode: a controlled episode cost for scaling benchmarks (0: none)")
      ->check(rl::in_range(0, 10'000'000))
      ->capture_default_str();
  rl::add_run_files(app, o.files, "generation");
  rl::add_rollout_log(app, o.rollout_log,
                      "rollout log OUTPUT with .rollouts.h5: 'full' (one row per rollout), "
                      "'summary' (one row per task), or 'off'");
  app.add_flag("--overwrite", o.overwrite,
               "replace the file at --output (a new run) and at --checkpoint, whatever it holds "
               "(otherwise refused: an earlier run's log, another run's checkpoint, any other "
               "file); regular files only");
  rl::add_task_timeout(app, o.task_timeout, "a task (its perturbations' or evaluation's episodes)");
  app.add_option("--time-limit", o.time_limit,
                 "stop (with a checkpoint) after the generation that ends past this many seconds "
                 "of this invocation; 0: no limit")
      ->check(rl::non_negative())
      ->capture_default_str();
  rl::parse_or_exit(app, o.files, argc, argv);
  auto known = rl::environment_names();
  if (std::find(known.begin(), known.end(), o.environment) == known.end()) {
    rl::reject(app, "unknown environment '" + o.environment + "'; known: " + names);
  }
  auto environment = rl::make_environment(o.environment);
  std::vector<long> layers{environment->observation_size()};
  layers.insert(layers.end(), o.hidden.begin(), o.hidden.end());
  layers.push_back(environment->action_space().size);
  // The master: theta and Adam's m and v, in the state and in the generation's working copy; the
  // network drawn first; the broadcast generation, its message and the copy kept for workers that
  // join later; the gradient and the update's temporaries. A worker: the message in its MPI
  // process and its task process, the generation kept, the network, a perturbation, the
  // perturbed parameters, a gradient part.
  constexpr int kMasterCopies = 12;
  constexpr int kWorkerCopies = 8;
  rl::check_network_memory(app, {.parameters = rl::mlp_parameters(layers),
                                 .master_copies = kMasterCopies,
                                 .worker_copies = kWorkerCopies,
                                 .workers = o.workers});
  if (o.population % 2 != 0) {
    rl::reject(app,
               "--population must be even (antithetic pairs), not " + std::to_string(o.population));
  }
  o.config_text = app.config_to_str(true, false);
  return o;
}

}  // namespace fiber::es
