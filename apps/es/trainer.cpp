#include "trainer.hpp"

#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

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

void save(const TrainerState& s, const rl::RunIdentity& identity,
          const rl::TrainingSession& session) {
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
  session.commit_checkpoint(w);
}

void load(TrainerState& s, const rl::RunIdentity& identity, const rl::CheckpointReader& r) {
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
// ... and no more parts than give each this many noise vectors, so that a worker's sum far
// outweighs the master's two messages for the part (docs/design.md, "fiber-es's gradient parts").
constexpr int kMinPairsPerGradientPart = 16;

// Between a run's generations: generations of at most this many episodes share no episode seed.
constexpr std::uint64_t kGenerationSeedStride = 10'000'019;
// Coprime with kGenerationSeedStride: runs whose --seed differ by less never share a seed base.
constexpr std::uint64_t kRunSeedStride = 1'000'003;

// Every pool call's items are tasks already: batches of --pairs-per-task pairs, evaluation
// episodes, gradient parts.
constexpr int kItemsPerTask = 1;

// How often a pool call in flight looks for a stop request: a stop is seen within this long.
constexpr std::chrono::milliseconds kStopPoll{50};

// The first seed of a generation's episodes: its perturbations' count up from it, then its
// evaluation episodes'.
std::uint64_t seed_base(std::uint64_t run_seed, std::int64_t generation) {
  return run_seed * kRunSeedStride + static_cast<std::uint64_t>(generation) * kGenerationSeedStride;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The result of a pool call, or nothing if a stop was requested first (the call is abandoned:
// the pool's teardown ends it).
template <class Pending>
auto unless_stopped(const Pending& pending) -> std::optional<decltype(pending.get())> {
  while (!pending.wait(kStopPoll)) {
    if (rl::stop_requested()) return std::nullopt;
  }
  return pending.get();
}

// What the pool workers get for a run: the pool's initializer.
Settings worker_settings(const Options& o, const std::vector<long>& layers) {
  return {.environment = o.environment,
          .layers = layers,
          .sigma = o.sigma,
          .noise_size = o.noise_size,
          .noise_seed = o.noise_seed,
          .record_observations = o.normalize_observations,
          .episodes_per_perturbation = o.episodes_per_perturbation,
          .common_start_states = o.common_start_states,
          .squash_actions = o.continuous_actions == "tanh",
          .step_sleep_us = o.step_sleep_us};
}

// A generation's episodes: the perturbations' results merged (returns in task order), and the
// evaluation episodes of the unperturbed policy, one result each.
struct Episodes {
  BatchResult perturbations;
  std::vector<BatchResult> evaluations;
};

// es_gradient_part's arguments: the noise indices of some pairs and their weights.
using GradientPart = std::tuple<std::vector<std::int64_t>, std::vector<double>>;

// The returns of the pairs, one row each: the positive member's, then the negative's.
Eigen::MatrixXd pair_returns(const BatchResult& result, int pairs) {
  Eigen::MatrixXd returns(pairs, 2);
  for (int row = 0; row < pairs; ++row) {
    returns(row, 0) = result.returns_positive[row];
    returns(row, 1) = result.returns_negative[row];
  }
  return returns;
}

// The mean return of the evaluation episodes (NaN without any).
double mean_evaluation_return(const std::vector<BatchResult>& evaluations) {
  std::vector<double> returns;
  for (const auto& evaluation : evaluations) {
    returns.insert(returns.end(), evaluation.returns_positive.begin(),
                   evaluation.returns_positive.end());
  }
  return returns.empty() ? std::numeric_limits<double>::quiet_NaN()
                         : std::accumulate(returns.begin(), returns.end(), 0.0) /
                               static_cast<double>(returns.size());
}

// How a generation leaves the run: going on, or ended.
enum class Outcome { next_generation, stopped, solved, out_of_time };

// The generations of this invocation, one at a time, in the steps of the algorithm. A generation
// works on a copy of the state, committed when it is complete: a stop (SIGTERM, SIGINT) abandons
// the generation in flight and checkpoints the last complete one, which the log ends with too,
// so a resumed run repeats and loses no generation.
class Generations {
 public:
  Generations(const Options& o, TrainerState& state, const rl::RunIdentity& identity,
              rl::TrainingSession& session, fiber::Pool& pool, rl::RunLog& log,
              rl::RolloutLog* rollouts)
      : o_(o),
        state_(state),
        identity_(identity),
        session_(session),
        pool_(pool),
        log_(log),
        rollouts_(rollouts),
        noise_index_(0, o.noise_size - state.theta.size()),
        pairs_(o.population / 2),
        episodes_(static_cast<std::uint64_t>(o.episodes_per_perturbation)),
        retried_before_(pool.stats().tasks_retried),
        invocation_started_(Clock::now()) {}

  // One generation: the policy to the workers, the perturbations drawn and their episodes run,
  // the returns ranked into the gradient estimate, Adam's step, then the log rows and any
  // checkpoint.
  Outcome run_one() {
    const auto started = Clock::now();
    pool_seconds_ = 0;
    const std::int64_t g = state_.generation;
    TrainerState next = state_;
    send_policy(next);

    const std::vector<std::int64_t> indices = draw_noise_indices(next.rng);
    const std::uint64_t base = seed_base(o_.seed, g);
    const std::vector<EpisodeBatch> batches = perturbation_batches(indices, base);
    const std::vector<EpisodeBatch> evaluations = evaluation_batches(base);
    const std::optional<Episodes> episodes = run_episodes(batches, evaluations);
    if (!episodes) return Outcome::stopped;
    const Eigen::MatrixXd returns = pair_returns(episodes->perturbations, pairs_);
    count_episodes(next, episodes->perturbations);

    const Eigen::VectorXd weights = rl::antithetic_weights(rl::centered_ranks_matrix(returns));
    const std::optional<Eigen::VectorXd> gradient =
        estimate_gradient(gradient_parts(indices, weights), returns.size());
    if (!gradient) return Outcome::stopped;
    next.adam.update(next.theta, -*gradient + o_.l2 * next.theta);  // ascent, weight decay

    const double generation_seconds = seconds_since(started);
    next.seconds += generation_seconds;
    next.generation = g + 1;
    state_ = std::move(next);
    const double eval = mean_evaluation_return(episodes->evaluations);
    log_generation(g, returns, eval, batches, *episodes, generation_seconds - pool_seconds_);
    return checkpoint_and_decide(g, eval);
  }

 private:
  // Runs `call`, counting its time as the generation's time waiting on the pool.
  template <class Call>
  auto on_pool(Call call) {
    const auto start = Clock::now();
    if constexpr (std::is_void_v<decltype(call())>) {
      call();
      pool_seconds_ += seconds_since(start);
    } else {
      auto result = call();
      pool_seconds_ += seconds_since(start);
      return result;
    }
  }

  // The policy of the generation (parameters, observation statistics) to every worker.
  void send_policy(const TrainerState& next) {
    auto generation =
        Generation{next.generation, to_vector(next.theta), to_vector(next.normalizer.mean()),
                   to_vector(next.normalizer.std())};
    on_pool([&] { pool_.broadcast(es_set_generation, generation); });
  }

  // One noise index per antithetic pair, from the run's random engine.
  std::vector<std::int64_t> draw_noise_indices(std::mt19937_64& rng) {
    std::vector<std::int64_t> indices(pairs_);
    for (auto& index : indices) index = noise_index_(rng);
    return indices;
  }

  // The pairs cut into tasks, each with the seed of its first pair's episodes (with common start
  // states, every task the generation's first seed).
  std::vector<EpisodeBatch> perturbation_batches(const std::vector<std::int64_t>& indices,
                                                 std::uint64_t base) const {
    std::vector<EpisodeBatch> batches;
    for (int first = 0; first < pairs_; first += o_.pairs_per_task) {
      const int last = std::min(pairs_, first + o_.pairs_per_task);
      const std::uint64_t seed = o_.common_start_states ? base : base + first * episodes_;
      batches.push_back({{indices.begin() + first, indices.begin() + last}, seed});
    }
    return batches;
  }

  // The evaluation episodes of the unperturbed policy (noise index -1), a task each, from the
  // seeds after the perturbations'.
  std::vector<EpisodeBatch> evaluation_batches(std::uint64_t base) const {
    std::vector<EpisodeBatch> evaluations;
    for (int e = 0; e < o_.eval_episodes; ++e) {
      evaluations.push_back({{-1}, base + pairs_ * episodes_ + e});
    }
    return evaluations;
  }

  // The perturbations' episodes, their results merged on each node, and beside them the
  // evaluation episodes; nothing if a stop was requested first.
  std::optional<Episodes> run_episodes(const std::vector<EpisodeBatch>& batches,
                                       const std::vector<EpisodeBatch>& evaluations) {
    return on_pool([&]() -> std::optional<Episodes> {
      auto pending_evaluations = pool_.map_async(es_evaluate, evaluations, kItemsPerTask);
      auto merged = unless_stopped(
          pool_.map_reduce_async(es_evaluate, batches, es_merge_results, kItemsPerTask));
      if (!merged) return std::nullopt;
      return Episodes{std::move(*merged), pending_evaluations.get()};
    });
  }

  // The episodes' count, steps and observation statistics into the next state.
  void count_episodes(TrainerState& next, const BatchResult& result) const {
    next.episodes += static_cast<std::int64_t>(result.lengths.size());
    next.timesteps +=
        std::accumulate(result.lengths.begin(), result.lengths.end(), std::int64_t{0});
    if (o_.normalize_observations && result.observation_count > 0) {
      next.normalizer.increment(to_eigen(result.observation_sum),
                                to_eigen(result.observation_sumsq), result.observation_count);
    }
  }

  // The pairs with their weights (centered ranks) in parts, a few per worker but not too small:
  // the parts are fixed by the layout, so that a resumed run adds them in the same order.
  std::vector<GradientPart> gradient_parts(const std::vector<std::int64_t>& indices,
                                           const Eigen::VectorXd& weights) const {
    std::vector<GradientPart> parts;
    const int part_count =
        std::min(kGradientPartsPerWorker * std::max(1, pool_.size()),
                 std::max(1, (pairs_ + kMinPairsPerGradientPart - 1) / kMinPairsPerGradientPart));
    const int part_size = (pairs_ + part_count - 1) / part_count;
    for (int first = 0; first < pairs_; first += part_size) {
      const int last = std::min(pairs_, first + part_size);
      parts.emplace_back(std::vector<std::int64_t>(indices.begin() + first, indices.begin() + last),
                         std::vector<double>(weights.data() + first, weights.data() + last));
    }
    return parts;
  }

  // The gradient estimate: the parts summed where the noise is, then on each node, over the
  // number of returns; nothing if a stop was requested first.
  std::optional<Eigen::VectorXd> estimate_gradient(const std::vector<GradientPart>& parts,
                                                   Eigen::Index returns) {
    auto summed = on_pool([&] {
      return unless_stopped(
          pool_.map_reduce_async(es_gradient_part, parts, es_add_vectors, kItemsPerTask));
    });
    if (!summed) return std::nullopt;
    Eigen::VectorXd gradient = to_eigen(*summed);
    gradient /= static_cast<double>(returns);
    return gradient;
  }

  // The generation's rows and progress line. A failure to append leaves the last checkpoint,
  // behind the log's rows. The rollouts come first: a generation in the summary log is in the
  // rollout log too.
  void log_generation(std::int64_t g, const Eigen::MatrixXd& returns, double eval,
                      const std::vector<EpisodeBatch>& batches, const Episodes& episodes,
                      double master_seconds) {
    const auto retried_so_far = pool_.stats().tasks_retried;
    const auto retried = retried_so_far - retried_before_;  // in this generation
    retried_before_ = retried_so_far;
    if (rollouts_) {
      rollouts_->append_step(rollout_rows(o_.rollout_log, g, batches, o_.episodes_per_perturbation,
                                          episodes.perturbations, episodes.evaluations,
                                          *rollouts_));
    }
    log_.append({g, returns.mean(), returns.minCoeff(), returns.maxCoeff(), eval, state_.episodes,
                 state_.timesteps, state_.seconds, pool_.size(), static_cast<std::int64_t>(retried),
                 master_seconds});
    std::printf(
        "gen %4lld | return mean %9.2f max %9.2f | eval %9.2f | %11lld steps | %7.1f s "
        "| %d workers\n",
        static_cast<long long>(g), returns.mean(), returns.maxCoeff(), eval,
        static_cast<long long>(state_.timesteps), state_.seconds, pool_.size());
    std::fflush(stdout);
  }

  // Checkpoints the committed state when due, and always when the run ends here: solved (with
  // --stop-at-target) or past --time-limit.
  Outcome checkpoint_and_decide(std::int64_t g, double eval) {
    const bool solved = o_.stop_at_target && eval >= o_.target_return;
    const bool out_of_time =
        o_.time_limit > 0 && seconds_since(invocation_started_) >= o_.time_limit;
    if (session_.checkpoint_due(state_.generation, o_.generations) || solved || out_of_time) {
      save(state_, identity_, session_);
    }
    if (solved) {
      std::printf("fiber-es: solved: eval return %.2f >= %.2f at generation %lld\n", eval,
                  o_.target_return, static_cast<long long>(g));
      return Outcome::solved;
    }
    if (out_of_time) {
      std::printf("fiber-es: time limit of %g s reached after generation %lld\n", o_.time_limit,
                  static_cast<long long>(g));
      return Outcome::out_of_time;
    }
    return Outcome::next_generation;
  }

  const Options& o_;
  TrainerState& state_;
  const rl::RunIdentity& identity_;
  rl::TrainingSession& session_;
  fiber::Pool& pool_;
  rl::RunLog& log_;
  rl::RolloutLog* rollouts_;  // null without a rollout log
  std::uniform_int_distribution<std::int64_t> noise_index_;
  const int pairs_;
  const std::uint64_t episodes_;  // per perturbation
  std::uint64_t retried_before_;  // the pool's tasks_retried before this generation
  const Clock::time_point invocation_started_;
  double pool_seconds_ = 0;  // the generation's time waiting on the pool; the rest is the master's
};

// The run of `state` from its generation on (or from the checkpoint the run resumes).
int train_generations(const Options& o, TrainerState& state, const std::vector<long>& layers,
                      const rl::RunIdentity& identity, rl::TrainingSession& session) {
  // Everything that can refuse the run comes before any file is created: the locks, the
  // checkpoint, what --output holds, the pool (and its noise table).
  session.claim([&](const rl::CheckpointReader& checkpoint) { load(state, identity, checkpoint); });
  const auto rollout_log_columns = rollout_columns(o.rollout_log);
  std::optional<rl::ClaimedRolloutLog> claimed_rollouts;
  if (o.rollout_log != rl::RolloutLevel::off) {
    claimed_rollouts.emplace(
        rl::claim_rollout_log(o.files, o.overwrite, session.resuming(), rollout_log_columns));
  }
  fiber::Pool& pool =
      session.start_pool({.processes = o.workers,
                          .initializer = fiber::call(es_setup, worker_settings(o, layers)),
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

  Generations generations(o, state, identity, session, pool, log, rollouts ? &*rollouts : nullptr);
  Outcome outcome = Outcome::next_generation;
  while (outcome == Outcome::next_generation && state.generation < o.generations &&
         !rl::stop_requested()) {
    outcome = generations.run_one();
  }
  const std::vector<rl::RolloutLog*> rollout_logs{rollouts ? &*rollouts : nullptr};
  if (state.generation < o.generations && outcome != Outcome::solved && rl::stop_requested()) {
    return session.stop(
        state.generation, [&] { save(state, identity, session); }, rollout_logs);
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
