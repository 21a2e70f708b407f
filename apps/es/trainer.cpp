#include "trainer.hpp"

#include <fmt/format.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "envs/environment.hpp"
#include "evaluation.hpp"
#include "policy/adam.hpp"
#include "policy/mlp.hpp"
#include "policy/normalizer.hpp"
#include "policy/ranks.hpp"
#include "rollout_rows.hpp"
#include "run/checkpoint_parts.hpp"
#include "run/eigen_conversions.hpp"
#include "run/exit_status.hpp"
#include "run/stop_request.hpp"
#include "run/training_session.hpp"
#include "storage/checkpoint.hpp"
#include "storage/run_log.hpp"

namespace fiber::es {
namespace {

using Clock = std::chrono::steady_clock;
using rl::to_eigen;
using rl::to_vector;

std::vector<rl::RunLog::Column> log_columns() {
  using T = rl::RunLog::Type;
  return {{"generation", T::int64},    {"return_mean", T::float64},   {"return_min", T::float64},
          {"return_max", T::float64},  {"eval_return", T::float64},   {"episodes", T::int64},
          {"timesteps", T::int64},     {"seconds", T::float64},       {"workers", T::int64},
          {"tasks_retried", T::int64}, {"master_seconds", T::float64}};
}

// Everything a run carries from one generation to the next: what a checkpoint holds.
struct TrainerState {
  std::int64_t generation = 0;  // generations done
  std::int64_t timesteps = 0;
  std::int64_t episodes = 0;
  double seconds = 0;
  Eigen::VectorXd theta;
  rl::Adam adam;
  rl::RunningNormalizer normalizer;
  std::mt19937_64 rng;
};

void save(const TrainerState& s, const rl::RunIdentity& identity, const std::string& path) {
  rl::CheckpointWriter w;
  rl::put_identity(w, identity);
  w.put("generation", s.generation);
  w.put("timesteps", s.timesteps);
  w.put("episodes", s.episodes);
  w.put("seconds", s.seconds);
  w.put("theta", to_vector(s.theta));
  rl::put_optimizer(w, s.adam);
  rl::put_observation_statistics(w, s.normalizer);
  rl::put_random_engine(w, s.rng);
  w.commit(path);
}

void load(TrainerState& s, const rl::RunIdentity& identity, const std::string& path) {
  rl::CheckpointReader r(path);
  rl::check_identity(r, identity);
  auto theta = rl::parameters(r, static_cast<std::size_t>(s.theta.size()), "policy");
  s.generation = r.int64("generation");
  s.timesteps = r.int64("timesteps");
  s.episodes = r.int64("episodes");
  s.seconds = r.float64("seconds");
  s.theta = to_eigen(theta);
  rl::get_optimizer(r, s.adam);
  rl::get_observation_statistics(r, s.normalizer);
  rl::get_random_engine(r, s.rng);
}

// How many parts of the gradient each worker sums (a task each): the parts are summed on each
// node, so that the master receives one P-vector per node...
constexpr int kGradientPartsPerWorker = 2;
// ... and each part sums at least this many noise vectors: ~0.5-3 ms of a worker's time at
// P = 29k-167k, ten times or more what the master spends on the part's two messages. More parts
// would only add master messages: at 1,024 workers the 1,024 parts of one pair each took the
// master longer than their sums took the workers.
constexpr int kMinPairsPerGradientPart = 16;

// The result of a pool call, or nothing if a stop was requested first (the call is abandoned:
// the pool's teardown ends it).
template <class Pending>
auto unless_stopped(const Pending& pending) -> std::optional<decltype(pending.get())> {
  while (!pending.wait(std::chrono::milliseconds(50))) {
    if (rl::stop_requested()) return std::nullopt;
  }
  return pending.get();
}

// The run of `state` from its generation on (or from the checkpoint the run resumes).
int train_generations(const Options& o, TrainerState& state, const std::vector<long>& layers,
                      const rl::RunIdentity& identity, rl::TrainingSession& session) {
  // Everything that can refuse the run comes before any file is created: the locks, the
  // checkpoint, what --output holds, the pool (and its noise table).
  session.claim([&](const std::string& checkpoint) { load(state, identity, checkpoint); });
  const auto rollout_log_columns = rollout_columns(o.rollout_log);
  std::optional<rl::ClaimedRolloutLog> claimed_rollouts;
  if (o.rollout_log != rl::RolloutLevel::off) {
    claimed_rollouts.emplace(
        rl::claim_rollout_log(o.files, o.overwrite, session.resuming(), rollout_log_columns));
  }
  Settings settings{.environment = o.environment,
                    .layers = layers,
                    .sigma = o.sigma,
                    .noise_size = o.noise_size,
                    .noise_seed = o.noise_seed,
                    .record_observations = o.normalize_observations,
                    .episodes_per_perturbation = o.episodes_per_perturbation,
                    .common_start_states = o.common_start_states,
                    .squash_actions = o.continuous_actions == "tanh",
                    .step_sleep_us = o.step_sleep_us};
  fiber::Pool& pool = session.start_pool({.processes = o.workers,
                                          .initializer = fiber::call(es_setup, settings),
                                          .task_timeout = rl::task_timeout(o.task_timeout)});
  rl::RunLog& log = session.open_log(
      state.generation,
      {{"config", o.config_text},
       {"environment", o.environment},
       {"algorithm", "OpenAI-ES (antithetic, centered ranks, Adam, weight decay)"}});
  std::optional<rl::RolloutLog> rollouts;
  if (claimed_rollouts) {
    rollouts.emplace(rl::begin_rollout_log("fiber-es", *claimed_rollouts, rollout_log_columns,
                                           "generation", session.resuming(), state.generation));
  }
  std::printf("fiber-es: %s, %lld parameters, population %d, %d workers on %s, log %s\n",
              o.environment.c_str(), static_cast<long long>(state.theta.size()), o.population,
              pool.size(), session.hosts().c_str(), o.files.output.c_str());

  const std::int64_t dim = state.theta.size();
  std::uniform_int_distribution<std::int64_t> noise_index(0, o.noise_size - dim);
  const int pairs = o.population / 2;
  const auto episodes = static_cast<std::uint64_t>(o.episodes_per_perturbation);
  auto retried_before = pool.stats().tasks_retried;

  const auto invocation_started = Clock::now();
  // A generation works on a copy of the state, committed when it is complete: a stop (SIGTERM,
  // SIGINT) abandons the generation in flight and checkpoints the last complete one, which the
  // log ends with too, so a resumed run repeats and loses no generation.
  bool solved = false;
  while (state.generation < o.generations && !rl::stop_requested()) {
    auto started = Clock::now();
    // The generation's time spent waiting on the pool; the rest is the master's own work.
    double pool_seconds = 0;
    auto on_pool = [&pool_seconds](auto call) {
      auto start = Clock::now();
      auto result = call();
      pool_seconds += std::chrono::duration<double>(Clock::now() - start).count();
      return result;
    };
    std::int64_t g = state.generation;
    TrainerState next = state;
    auto generation = Generation{g, to_vector(next.theta), to_vector(next.normalizer.mean()),
                                 to_vector(next.normalizer.std())};
    on_pool([&] {
      pool.broadcast(es_set_generation, generation);
      return 0;
    });

    // The perturbations, cut into tasks, their results merged on each node (returns in task
    // order); beside them the evaluation episodes of the mean policy.
    std::vector<std::int64_t> indices(pairs);
    for (auto& index : indices) index = noise_index(next.rng);
    std::vector<EpisodeBatch> batches, evaluations;
    std::uint64_t seed_base = o.seed * 1'000'003 + static_cast<std::uint64_t>(g) * 10'000'019;
    for (int first = 0; first < pairs; first += o.pairs_per_task) {
      int last = std::min(pairs, first + o.pairs_per_task);
      std::uint64_t seed = o.common_start_states ? seed_base : seed_base + first * episodes;
      batches.push_back({{indices.begin() + first, indices.begin() + last}, seed});
    }
    for (int e = 0; e < o.eval_episodes; ++e) {
      evaluations.push_back({{-1}, seed_base + pairs * episodes + e});
    }
    auto evaluated = on_pool([&] {
      auto pending_evaluations = pool.map_async(es_evaluate, evaluations, 1);
      auto merged =
          unless_stopped(pool.map_reduce_async(es_evaluate, batches, es_merge_results, 1));
      return merged ? std::optional(std::pair(std::move(*merged), pending_evaluations.get()))
                    : std::nullopt;
    });
    if (!evaluated) break;
    const auto& [result, evaluation_results] = *evaluated;

    Eigen::MatrixXd returns(pairs, 2);
    for (int row = 0; row < pairs; ++row) {
      returns(row, 0) = result.returns_positive[row];
      returns(row, 1) = result.returns_negative[row];
    }
    next.episodes += static_cast<std::int64_t>(result.lengths.size());
    next.timesteps +=
        std::accumulate(result.lengths.begin(), result.lengths.end(), std::int64_t{0});
    if (o.normalize_observations && result.observation_count > 0) {
      next.normalizer.increment(to_eigen(result.observation_sum),
                                to_eigen(result.observation_sumsq), result.observation_count);
    }
    std::vector<double> eval_returns;
    for (const auto& evaluation : evaluation_results) {
      eval_returns.insert(eval_returns.end(), evaluation.returns_positive.begin(),
                          evaluation.returns_positive.end());
    }

    // Centered ranks, then the gradient as partial sums where the noise is, a few per worker
    // but not too small, summed on each node: the parts are fixed by the layout, so that a
    // resumed run adds them in the same order.
    Eigen::VectorXd weights = rl::antithetic_weights(rl::centered_ranks_matrix(returns));
    std::vector<std::tuple<std::vector<std::int64_t>, std::vector<double>>> parts;
    int part_count =
        std::min(kGradientPartsPerWorker * std::max(1, pool.size()),
                 std::max(1, (pairs + kMinPairsPerGradientPart - 1) / kMinPairsPerGradientPart));
    int part_size = (pairs + part_count - 1) / part_count;
    for (int first = 0; first < pairs; first += part_size) {
      int last = std::min(pairs, first + part_size);
      parts.emplace_back(std::vector<std::int64_t>(indices.begin() + first, indices.begin() + last),
                         std::vector<double>(weights.data() + first, weights.data() + last));
    }
    auto summed = on_pool([&] {
      return unless_stopped(pool.map_reduce_async(es_gradient_part, parts, es_add_vectors, 1));
    });
    if (!summed) break;
    Eigen::VectorXd gradient = to_eigen(*summed);
    gradient /= static_cast<double>(returns.size());
    next.adam.update(next.theta, -gradient + o.l2 * next.theta);

    double generation_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    next.seconds += generation_seconds;
    next.generation = g + 1;
    state = std::move(next);
    double eval = eval_returns.empty()
                      ? std::numeric_limits<double>::quiet_NaN()
                      : std::accumulate(eval_returns.begin(), eval_returns.end(), 0.0) /
                            static_cast<double>(eval_returns.size());
    const auto retried_so_far = pool.stats().tasks_retried;
    const auto retried = retried_so_far - retried_before;  // in this generation
    retried_before = retried_so_far;
    // A failure to append leaves the last checkpoint, behind the log's rows. The rollouts come
    // first: a generation in the summary log is in the rollout log too.
    if (rollouts) {
      rollouts->append_step(rollout_rows(o.rollout_log, g, batches, o.episodes_per_perturbation,
                                         result, evaluation_results, *rollouts));
    }
    log.append({g, returns.mean(), returns.minCoeff(), returns.maxCoeff(), eval, state.episodes,
                state.timesteps, state.seconds, pool.size(), static_cast<std::int64_t>(retried),
                generation_seconds - pool_seconds});
    std::printf(
        "gen %4lld | return mean %9.2f max %9.2f | eval %9.2f | %11lld steps | %7.1f s "
        "| %d workers\n",
        static_cast<long long>(g), returns.mean(), returns.maxCoeff(), eval,
        static_cast<long long>(state.timesteps), state.seconds, pool.size());
    std::fflush(stdout);

    solved = o.stop_at_target && eval >= o.target_return;
    bool out_of_time =
        o.time_limit > 0 &&
        std::chrono::duration<double>(Clock::now() - invocation_started).count() >= o.time_limit;
    if (session.checkpoint_due(state.generation, o.generations) || solved || out_of_time) {
      save(state, identity, o.files.checkpoint);
    }
    if (solved) {
      std::printf("fiber-es: solved: eval return %.2f >= %.2f at generation %lld\n", eval,
                  o.target_return, static_cast<long long>(g));
      break;
    }
    if (out_of_time) {
      std::printf("fiber-es: time limit of %g s reached after generation %lld\n", o.time_limit,
                  static_cast<long long>(g));
      break;
    }
  }
  const std::vector<rl::RolloutLog*> rollout_logs{rollouts ? &*rollouts : nullptr};
  if (state.generation < o.generations && !solved && rl::stop_requested()) {
    return session.stop(
        state.generation, [&] { save(state, identity, o.files.checkpoint); }, rollout_logs);
  }
  session.close_logs(rollout_logs);
  std::printf("fiber-es: done: %lld generations, %lld timesteps, %.1f s; log %s, checkpoint %s\n",
              static_cast<long long>(state.generation), static_cast<long long>(state.timesteps),
              state.seconds, o.files.output.c_str(), o.files.checkpoint.c_str());
  return 0;
}

}  // namespace

int train(const Options& o) {
  auto environment = rl::make_environment(o.environment);
  const auto& space = environment->action_space();
  std::vector<long> layers{environment->observation_size()};
  layers.insert(layers.end(), o.hidden.begin(), o.hidden.end());
  layers.push_back(space.size);  // discrete: one logit per action; continuous: one per dimension

  TrainerState state;
  rl::Mlp policy(std::vector<Eigen::Index>(layers.begin(), layers.end()), o.seed);
  state.theta = policy.parameters();
  state.adam = rl::Adam(state.theta.size(), o.learning_rate);
  state.normalizer = rl::RunningNormalizer(environment->observation_size());
  state.rng.seed(o.seed);
  if (o.noise_size <= state.theta.size()) {
    std::fprintf(stderr,
                 "fiber-es: --noise-size %lld is smaller than the policy (%lld parameters)\n",
                 static_cast<long long>(o.noise_size), static_cast<long long>(state.theta.size()));
    return rl::kExitBadInput;
  }

  const rl::RunIdentity identity{"fiber-es", o.environment, {layers.begin(), layers.end()}};
  rl::TrainingSession session({"fiber-es", "generation", log_columns()}, o.files, o.overwrite);
  return session.run([&] { return train_generations(o, state, layers, identity, session); });
}

}  // namespace fiber::es
