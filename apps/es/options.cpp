#include "options.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "envs/environment.hpp"

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
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--population", o.population, "perturbations evaluated per generation (even)")
      ->check(CLI::Range(2, 10'000'000))
      ->capture_default_str();
  app.add_option("--pairs-per-task", o.pairs_per_task,
                 "antithetic pairs one task evaluates (episodes per task: twice this)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sigma", o.sigma, "standard deviation of the parameter noise")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--learning-rate", o.learning_rate, "Adam stepsize")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--l2", o.l2, "weight decay coefficient")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--hidden", o.hidden, "hidden layer sizes of the tanh MLP policy")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--noise-size", o.noise_size,
                 "float32 entries of the noise table, one copy per node (250000000 = 1 GB on a "
                 "cluster)")
      ->check(CLI::Range(std::int64_t{1'000}, std::int64_t{4'000'000'000}))
      ->capture_default_str();
  app.add_option("--noise-seed", o.noise_seed, "seed of the noise table")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the policy and of the noise sampling")
      ->capture_default_str();
  app.add_option("--episodes-per-perturbation", o.episodes_per_perturbation,
                 "episodes (from different start states) averaged into each perturbation's return")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--common-start-states,!--no-common-start-states", o.common_start_states,
               "every perturbation of a generation starts from the same states (common random "
               "numbers: ranks compare policies, not starting luck)")
      ->default_str(o.common_start_states ? "true" : "false");  // CLI11 would say false
  app.add_option("--continuous-actions", o.continuous_actions,
                 "continuous action spaces: 'clip' the network's output to the bounds, or 'tanh' "
                 "to squash it into them")
      ->check(CLI::IsMember({"clip", "tanh"}))
      ->capture_default_str();
  app.add_option("--eval-episodes", o.eval_episodes,
                 "episodes of the unperturbed policy per generation")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--target-return", o.target_return, "the eval return that solves the task")
      ->capture_default_str();
  app.add_flag("--stop-at-target,!--no-stop-at-target", o.stop_at_target,
               "stop once the eval return reaches --target-return")
      ->default_str(o.stop_at_target ? "true" : "false");  // CLI11 would say false
  app.add_flag("--normalize-observations,!--no-normalize-observations", o.normalize_observations,
               "running observation normalization (as OpenAI-ES)")
      ->default_str(o.normalize_observations ? "true" : "false");  // CLI11 would say false
  app.add_option("--workers", o.workers, "pool size; 0 = one per processor slot")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--step-sleep-us", o.step_sleep_us,
                 "simulated cost of an environment step in microseconds, slept at the end of "
                 "each episode: a controlled episode cost for scaling benchmarks (0: none)")
      ->check(CLI::Range(0, 10'000'000))
      ->capture_default_str();
  app.add_option("--output", o.output, "HDF5 run log (one row per generation)")
      ->capture_default_str();
  app.add_option("--checkpoint", o.checkpoint, "checkpoint file (default: OUTPUT with .ckpt.h5)");
  app.add_option("--checkpoint-every", o.checkpoint_every, "generations between checkpoints")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--time-limit", o.time_limit,
                 "stop (with a checkpoint) after the generation that ends past this many seconds "
                 "of this invocation; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--resume", o.resume,
                 "continue from this checkpoint; 'auto': from --checkpoint if it exists");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    std::exit(app.exit(help));
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "fiber-es: %s (fiber-es --help lists the options)\n", error.what());
    std::exit(2);
  }
  auto known = rl::environment_names();
  if (std::find(known.begin(), known.end(), o.environment) == known.end()) {
    std::fprintf(stderr, "fiber-es: unknown environment '%s'; known: %s\n", o.environment.c_str(),
                 names.c_str());
    std::exit(2);
  }
  if (o.population % 2 != 0) {
    std::fprintf(stderr, "fiber-es: --population must be even (antithetic pairs), not %d\n",
                 o.population);
    std::exit(2);
  }
  if (o.checkpoint.empty()) {
    o.checkpoint = std::filesystem::path(o.output).replace_extension(".ckpt.h5").string();
  }
  o.config_text = app.config_to_str(true, false);
  return o;
}

}  // namespace fiber::es
