#include "trainer.hpp"

#include <fmt/format.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "actor_critic.hpp"
#include "envs/environment.hpp"
#include "gae.hpp"
#include "learner.hpp"
#include "learner_task.hpp"
#include "policy/adam.hpp"
#include "policy/normalizer.hpp"
#include "return_scaler.hpp"
#include "rollout.hpp"
#include "rollout_rows.hpp"
#include "run/checkpoint_parts.hpp"
#include "run/eigen_conversions.hpp"
#include "run/random_engine_text.hpp"
#include "run/stop_request.hpp"
#include "run/training_session.hpp"
#include "storage/checkpoint.hpp"
#include "storage/error.hpp"
#include "storage/run_log.hpp"

namespace fiber::ppo {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kAdamEpsilon = 1e-5;  // as CleanRL
using rl::to_eigen;
using rl::to_vector;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<rl::RunLog::Column> log_columns() {
  using T = rl::RunLog::Type;
  return {{"iteration", T::int64},        {"timesteps", T::int64},
          {"episodes", T::int64},         {"return_mean", T::float64},
          {"return_min", T::float64},     {"return_max", T::float64},
          {"episode_length", T::float64}, {"eval_return", T::float64},
          {"policy_loss", T::float64},    {"value_loss", T::float64},
          {"entropy", T::float64},        {"approx_kl", T::float64},
          {"clip_fraction", T::float64},  {"explained_variance", T::float64},
          {"learning_rate", T::float64},  {"rollout_seconds", T::float64},
          {"update_seconds", T::float64}, {"seconds", T::float64},
          {"workers", T::int64}};
}

// Everything a run carries from one iteration to the next: what a checkpoint holds.
struct TrainerState {
  std::int64_t iteration = 0;  // iterations done
  std::int64_t timesteps = 0;
  std::int64_t episodes = 0;
  double seconds = 0;
  ActorCritic model;
  rl::Adam adam;
  rl::RunningNormalizer normalizer;
  ReturnScaler return_scaler;
  std::vector<SlotState> slots;
  std::mt19937_64 rng;  // minibatch permutations
};

void save(const TrainerState& s, const rl::RunIdentity& identity,
          const rl::TrainingSession& session) {
  rl::CheckpointWriter w;
  rl::put_identity(w, identity);
  w.put("iteration", s.iteration);
  w.put("timesteps", s.timesteps);
  w.put("episodes", s.episodes);
  w.put("seconds", s.seconds);
  w.put("theta", to_vector(s.model.parameters()));
  rl::put_optimizer(w, s.adam);
  rl::put_observation_statistics(w, s.normalizer);
  const auto& scaler = s.return_scaler.state();
  w.put("return_mean", scaler.mean);
  w.put("return_variance", scaler.variance);
  w.put("return_count", scaler.count);
  w.put("slot_discounted_return", scaler.returns);
  std::vector<double> physics, episode_return;
  std::vector<std::int64_t> episode, episode_steps;
  for (const SlotState& slot : s.slots) {
    physics.insert(physics.end(), slot.physics.begin(), slot.physics.end());
    episode.push_back(slot.episode);
    episode_steps.push_back(slot.episode_steps);
    episode_return.push_back(slot.episode_return);
  }
  w.put("slot_physics", physics);
  w.put("slot_episode", episode);
  w.put("slot_episode_steps", episode_steps);
  w.put("slot_episode_return", episode_return);
  rl::put_random_engine(w, s.rng);
  session.commit_checkpoint(w);
}

void load(TrainerState& s, const rl::RunIdentity& identity, const rl::CheckpointReader& r) {
  rl::check_identity(r, identity);
  auto theta = rl::parameters(r, static_cast<std::size_t>(s.model.parameter_count()), "model");
  const auto& episode = r.int64_vector("slot_episode");
  const auto& episode_steps = r.int64_vector("slot_episode_steps");
  const auto& episode_return = r.vector("slot_episode_return");
  const auto& physics = r.vector("slot_physics");
  const std::size_t slots = s.slots.size();
  if (episode.size() != slots || episode_steps.size() != slots || episode_return.size() != slots ||
      physics.size() % slots != 0) {
    throw rl::CheckpointError(
        fmt::format("checkpoint {}: made for {} environments, this run has {} (--envs?)",
                    r.path().string(), episode.size(), slots));
  }
  s.iteration = r.int64("iteration");
  s.timesteps = r.int64("timesteps");
  s.episodes = r.int64("episodes");
  s.seconds = r.float64("seconds");
  s.model.set_parameters(to_eigen(theta));
  rl::get_optimizer(r, s.adam);
  rl::get_observation_statistics(r, s.normalizer);
  s.return_scaler.set_state({r.float64("return_mean"), r.float64("return_variance"),
                             r.float64("return_count"), r.vector("slot_discounted_return")});
  const std::size_t physics_size = physics.size() / slots;
  for (std::size_t k = 0; k < slots; ++k) {
    SlotState& slot = s.slots[k];
    slot.physics.assign(physics.begin() + static_cast<std::ptrdiff_t>(k * physics_size),
                        physics.begin() + static_cast<std::ptrdiff_t>((k + 1) * physics_size));
    slot.episode = episode[k];
    slot.episode_steps = episode_steps[k];
    slot.episode_return = episode_return[k];
  }
  rl::get_random_engine(r, s.rng);
}

// What one iteration measured, for the log row and the progress line.
struct IterationReport {
  std::vector<double> episode_returns;
  std::vector<std::int64_t> episode_lengths;
  double eval_return = kNaN;
  double learning_rate = 0;
  UpdateReport update;
  double rollout_seconds = 0;
  double update_seconds = 0;
  int workers = 0;
  std::vector<rl::RunLog::Row> episode_rows, task_rows;  // for the rollout logs
};

// The rollout logs a run writes (--rollout-log): none, the tasks', or both.
struct RolloutLogs {
  std::optional<rl::RolloutLog> episodes, tasks;
  std::vector<rl::RolloutLog*> all() {
    return {episodes ? &*episodes : nullptr, tasks ? &*tasks : nullptr};
  }
};

// Folds the segments (in slot order, so the result does not depend on the workers) into the
// samples of the update: slot states, normalizer statistics, reward scaling, bootstraps, GAE.
Samples assemble(TrainerState& s, const std::vector<Segment>& segments, const Options& o,
                 IterationReport& report) {
  const auto slots = static_cast<Eigen::Index>(segments.size());
  const auto steps = static_cast<Eigen::Index>(o.steps);
  const Eigen::Index n = slots * steps;
  Samples samples;
  samples.observations.resize(segments.front().observations.rows(), n);
  samples.actions.resize(segments.front().actions.rows(), n);
  samples.log_probs.resize(n);
  samples.advantages.resize(n);
  samples.returns.resize(n);
  samples.values.resize(n);

  // Rewards, scaled step by step across the slots (as a vectorized environment would).
  std::vector<std::vector<double>> rewards(segments.size());
  for (std::size_t k = 0; k < segments.size(); ++k) rewards[k] = segments[k].rewards;
  if (o.normalize_rewards) {
    std::vector<double> step_rewards(segments.size());
    std::vector<unsigned char> ended(segments.size());
    for (std::size_t t = 0; t < static_cast<std::size_t>(steps); ++t) {
      for (std::size_t k = 0; k < segments.size(); ++k) {
        step_rewards[k] = segments[k].rewards[t];
        ended[k] = segments[k].terminated[t] || segments[k].truncated[t];
      }
      auto scaled = s.return_scaler.scale(step_rewards, ended);
      for (std::size_t k = 0; k < segments.size(); ++k) rewards[k][t] = scaled[k];
    }
  }

  for (std::size_t k = 0; k < segments.size(); ++k) {
    const Segment& segment = segments[k];
    s.slots[k] = segment.next;
    if (o.normalize_observations) {
      s.normalizer.increment(to_eigen(segment.raw_observation_sum),
                             to_eigen(segment.raw_observation_sumsq), static_cast<double>(steps));
    }
    report.episode_returns.insert(report.episode_returns.end(), segment.finished_returns.begin(),
                                  segment.finished_returns.end());
    report.episode_lengths.insert(report.episode_lengths.end(), segment.finished_lengths.begin(),
                                  segment.finished_lengths.end());
    std::vector<unsigned char> ended(static_cast<std::size_t>(steps));
    for (std::size_t t = 0; t < ended.size(); ++t) {
      rewards[k][t] += o.gamma * segment.truncation_values[t];
      ended[t] = segment.terminated[t] || segment.truncated[t];
    }
    const auto advantages = gae_advantages(rewards[k], segment.values, ended, segment.last_value,
                                           o.gamma, o.gae_lambda);
    const Eigen::Index first = static_cast<Eigen::Index>(k) * steps;
    samples.observations.middleCols(first, steps) = segment.observations;
    samples.actions.middleCols(first, steps) = segment.actions;
    samples.log_probs.segment(first, steps) = to_eigen(segment.log_probs);
    samples.values.segment(first, steps) = to_eigen(segment.values);
    samples.advantages.segment(first, steps) = to_eigen(advantages);
  }
  samples.returns = samples.advantages + samples.values;
  s.timesteps += n;
  s.episodes += static_cast<std::int64_t>(report.episode_returns.size());
  return samples;
}

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::vector<double> evaluation_returns(fiber::Pool& pool, const Options& o, std::int64_t index) {
  std::vector<std::uint64_t> seeds;
  for (int e = 0; e < o.eval_episodes; ++e) {
    seeds.push_back(mix_seed(o.seed, kEvaluationStream,
                             static_cast<std::uint64_t>(index * o.eval_episodes + e)));
  }
  std::vector<double> returns;
  for (const auto& result : pool.map(ppo_evaluate, seeds, 1)) {
    returns.push_back(result.episode_return);
  }
  return returns;
}

// Where the update runs (--learner-cores): in the master (no pool), or on a learner, a pool of one
// worker of N cores; what its updates cost beyond their computation.
// docs/guide/rl.md "fiber-ppo's update on N cores".
struct Learner {
  std::optional<fiber::Pool> pool;
  std::int64_t updates = 0;
  double seconds = 0;          // the updates' wall time, seen from the master
  double compute_seconds = 0;  // of which the learner computed
};

// The update, in the master or on the learner: the same results either way (learner_task.hpp).
UpdateReport update(TrainerState& s, Samples samples, const UpdateSettings& settings,
                    Learner& learner) {
  if (!learner.pool) return ppo_update(s.model, s.adam, samples, settings, s.rng);
  const auto started = Clock::now();
  LearnerResult result = learner.pool->apply(
      ppo_learn,
      LearnerTask{s.model, s.adam, rl::engine_text(s.rng), std::move(samples), settings});
  learner.seconds += seconds_since(started);
  learner.compute_seconds += result.seconds;
  if (learner.updates++ == 0) {
    std::printf("fiber-ppo: the update on a learner bound to %d cores, on %d threads\n",
                result.cores, result.report.threads);
  }
  s.model = std::move(result.model);
  s.adam = std::move(result.adam);
  rl::set_engine(s.rng, result.rng);
  return result.report;
}

PolicySnapshot snapshot_of(const TrainerState& s) {
  return {s.iteration, to_vector(s.model.parameters()), to_vector(s.normalizer.mean()),
          to_vector(s.normalizer.std())};
}

// One iteration: rollouts on the pool (segments and, when due, evaluation episodes of the same
// policy), then the update, in the master or on the learner.
IterationReport run_iteration(TrainerState& s, fiber::Pool& pool, Learner& learner,
                              const Options& o, const UpdateSettings& update_settings,
                              RolloutLogs& rollouts) {
  IterationReport report;
  const auto started = Clock::now();
  if (o.park_during_update) pool.resize(o.workers);
  report.workers = pool.size();
  pool.broadcast(ppo_set_policy, snapshot_of(s));
  std::vector<SegmentTask> tasks;
  for (const SlotState& slot : s.slots) tasks.push_back({s.iteration, o.steps, slot});
  const bool evaluate =
      o.eval_every > 0 && (s.iteration % o.eval_every == 0 || s.iteration + 1 == o.iterations());
  std::vector<double> eval_returns;
  auto segments_pending = pool.map_async(ppo_collect, tasks, 1);
  if (evaluate) eval_returns = evaluation_returns(pool, o, s.iteration);
  const std::vector<Segment> segments = segments_pending.get();
  report.rollout_seconds = seconds_since(started);
  if (rollouts.episodes)
    report.episode_rows = episode_rows(s.iteration, segments, *rollouts.episodes);
  if (rollouts.tasks) report.task_rows = task_rows(s.iteration, segments, *rollouts.tasks);

  const auto update_started = Clock::now();
  if (o.park_during_update) pool.resize(0);
  report.eval_return = mean_of(eval_returns);
  Samples samples = assemble(s, segments, o, report);
  const double fraction_left =
      1.0 - static_cast<double>(s.iteration) / static_cast<double>(o.iterations());
  report.learning_rate = o.anneal_learning_rate ? o.learning_rate * fraction_left : o.learning_rate;
  s.adam.set_stepsize(report.learning_rate);
  report.update = update(s, std::move(samples), update_settings, learner);
  report.update_seconds = seconds_since(update_started);
  s.seconds += seconds_since(started);
  ++s.iteration;
  return report;
}

// The episodes that ended in an iteration (NaN if none did).
struct EpisodeSummary {
  double mean = kNaN, min = kNaN, max = kNaN, length = kNaN;
};

EpisodeSummary summarize(const IterationReport& r) {
  EpisodeSummary summary;
  if (r.episode_returns.empty()) return summary;
  summary.mean = mean_of(r.episode_returns);
  summary.min = *std::min_element(r.episode_returns.begin(), r.episode_returns.end());
  summary.max = *std::max_element(r.episode_returns.begin(), r.episode_returns.end());
  summary.length = static_cast<double>(std::accumulate(r.episode_lengths.begin(),
                                                       r.episode_lengths.end(), std::int64_t{0})) /
                   static_cast<double>(r.episode_lengths.size());
  return summary;
}

std::string format_or_dash(double value, const char* format) {
  return std::isnan(value) ? std::string("-") : fmt::format(fmt::runtime(format), value);
}

// The run of `state` from its iteration on (or from the checkpoint the run resumes).
int train_iterations(const Options& o, TrainerState& state, const rl::RunIdentity& identity,
                     rl::TrainingSession& session) {
  // Everything that can refuse the run comes before any file is created: the locks, the
  // checkpoint, what --output holds, the pool.
  session.claim([&](const rl::CheckpointReader& checkpoint) { load(state, identity, checkpoint); });
  std::optional<rl::ClaimedRolloutLog> claimed_episodes, claimed_tasks;
  if (o.rollout_log == rl::RolloutLevel::full) {
    claimed_episodes.emplace(
        rl::claim_rollout_log(o.files, o.overwrite, session.resuming(), episode_columns()));
  }
  if (o.rollout_log != rl::RolloutLevel::off) {
    claimed_tasks.emplace(rl::claim_rollout_log(o.files, o.overwrite, session.resuming(),
                                                task_columns(), rl::kTasksSuffix));
  }
  Options run = o;
  if (run.workers == 0) run.workers = o.environments;
  Settings settings{.environment = o.environment,
                    .hidden = o.hidden,
                    .seed = o.seed,
                    .step_sleep_us = o.step_sleep_us};
  fiber::Pool& pool = session.start_pool({.processes = run.workers,
                                          .initializer = fiber::call(ppo_setup, settings),
                                          .task_timeout = rl::task_timeout(o.task_timeout)});
  Learner learner;
  if (o.learner_cores > 1) {
    learner.pool.emplace(fiber::PoolOptions{.processes = 1,
                                            .task_timeout = rl::task_timeout(o.task_timeout),
                                            .shape = {.cores = o.learner_cores}});
  }
  rl::RunLog& log =
      session.open_log(state.iteration, {{"config", o.config_text},
                                         {"environment", o.environment},
                                         {"algorithm",
                                          "PPO (clipped surrogate, GAE, value loss, entropy bonus, "
                                          "Adam, gradient norm clipping)"}});
  RolloutLogs rollouts;
  if (claimed_episodes) {
    rollouts.episodes.emplace(rl::begin_rollout_log("fiber-ppo", *claimed_episodes,
                                                    episode_columns(), "iteration",
                                                    session.resuming(), state.iteration));
  }
  if (claimed_tasks) {
    rollouts.tasks.emplace(rl::begin_rollout_log("fiber-ppo", *claimed_tasks, task_columns(),
                                                 "iteration", session.resuming(), state.iteration));
  }
  std::printf(
      "fiber-ppo: %s, %lld parameters, %d environments x %d steps, %lld iterations, "
      "%d workers on %s, log %s\n",
      o.environment.c_str(), static_cast<long long>(state.model.parameter_count()), o.environments,
      o.steps, static_cast<long long>(o.iterations()), pool.size(), session.hosts().c_str(),
      o.files.output.c_str());

  const UpdateSettings update_settings{{o.clip, o.value_coefficient, o.entropy_coefficient},
                                       o.epochs,
                                       o.minibatches,
                                       o.max_gradient_norm,
                                       o.normalize_advantages,
                                       o.learner_cores};
  while (state.iteration < o.iterations()) {
    // A graceful stop (SIGTERM, SIGINT) between iterations: the one in flight (short) was
    // finished and logged; the checkpoint is of it, so a resumed run repeats and loses nothing.
    if (rl::stop_requested()) {
      return session.stop(
          state.iteration, [&] { save(state, identity, session); }, rollouts.all());
    }
    const std::int64_t i = state.iteration;
    const IterationReport r = run_iteration(state, pool, learner, run, update_settings, rollouts);
    const EpisodeSummary episodes = summarize(r);
    const auto& loss = r.update.loss;
    // A failure to append leaves the last checkpoint, behind the log's rows. The rollouts come
    // first: an iteration in the summary log is in the rollout logs too.
    if (rollouts.episodes) rollouts.episodes->append_step(r.episode_rows);
    if (rollouts.tasks) rollouts.tasks->append_step(r.task_rows);
    log.append({i, state.timesteps, state.episodes, episodes.mean, episodes.min, episodes.max,
                episodes.length, r.eval_return, loss.policy, loss.value, loss.entropy,
                loss.approx_kl, loss.clip_fraction, r.update.explained_variance, r.learning_rate,
                r.rollout_seconds, r.update_seconds, state.seconds, r.workers});
    std::printf(
        "iter %5lld | %9lld steps | return %8s [%s, %s] len %6s | eval %8s | pi %7.4f v %8.4f "
        "ent %6.3f kl %.4f clip %.3f | %6.1f s (%.0f%% rollout) | %d workers\n",
        static_cast<long long>(i), static_cast<long long>(state.timesteps),
        format_or_dash(episodes.mean, "{:.2f}").c_str(),
        format_or_dash(episodes.min, "{:.1f}").c_str(),
        format_or_dash(episodes.max, "{:.1f}").c_str(),
        format_or_dash(episodes.length, "{:.1f}").c_str(),
        format_or_dash(r.eval_return, "{:.2f}").c_str(), loss.policy, loss.value, loss.entropy,
        loss.approx_kl, loss.clip_fraction, state.seconds,
        100.0 * r.rollout_seconds / (r.rollout_seconds + r.update_seconds), r.workers);
    std::fflush(stdout);

    const bool solved = o.stop_at_target && r.eval_return >= o.target_return;
    const bool stopping = state.iteration == o.stop_after;
    if (session.checkpoint_due(state.iteration, o.iterations()) || solved || stopping) {
      save(state, identity, session);
    }
    if (solved) {
      std::printf("fiber-ppo: solved: eval return %.2f >= %.2f at iteration %lld\n", r.eval_return,
                  o.target_return, static_cast<long long>(i));
      break;
    }
    if (stopping) {
      std::printf(
          "fiber-ppo: stopped after iteration %lld (--stop-after); continue with --resume\n",
          static_cast<long long>(i));
      break;
    }
  }
  if (o.park_during_update) pool.resize(run.workers);
  pool.broadcast(ppo_set_policy, snapshot_of(state));
  const double final_eval = mean_of(evaluation_returns(pool, o, state.iteration));
  log.set_meta("final_eval_return", fmt::format("{}", final_eval));
  session.close_logs(rollouts.all());
  std::printf(
      "fiber-ppo: done: %lld iterations, %lld timesteps, %.1f s, final eval return %.2f "
      "(%d episodes); log %s, checkpoint %s\n",
      static_cast<long long>(state.iteration), static_cast<long long>(state.timesteps),
      state.seconds, final_eval, o.eval_episodes, o.files.output.c_str(),
      o.files.checkpoint.c_str());
  if (learner.updates > 0) {
    std::printf(
        "fiber-ppo: learner: %lld updates in %.3f s, %.3f s of them moving the samples and the "
        "model (%.1f ms an update)\n",
        static_cast<long long>(learner.updates), learner.seconds,
        learner.seconds - learner.compute_seconds,
        1e3 * (learner.seconds - learner.compute_seconds) / static_cast<double>(learner.updates));
  }
  return 0;
}

}  // namespace

int train(const Options& o) {
  auto environment = rl::make_environment(o.environment);
  const auto& space = environment->action_space();
  const long observation_size = environment->observation_size();

  TrainerState state;
  state.model = ActorCritic(observation_size, o.hidden, space.discrete, space.size,
                            o.initial_log_std, o.seed);
  state.adam = rl::Adam(state.model.parameter_count(), o.learning_rate, 0.9, 0.999, kAdamEpsilon);
  state.normalizer = rl::RunningNormalizer(observation_size);
  state.return_scaler = ReturnScaler(o.environments, o.gamma);
  state.slots.resize(static_cast<std::size_t>(o.environments));
  for (int k = 0; k < o.environments; ++k) state.slots[static_cast<std::size_t>(k)].slot = k;
  state.rng.seed(o.seed);

  rl::RunIdentity identity{"fiber-ppo", o.environment, {observation_size}};
  identity.layers.insert(identity.layers.end(), o.hidden.begin(), o.hidden.end());
  identity.layers.push_back(space.size);

  rl::TrainingSession session({"fiber-ppo", "iteration", log_columns()}, o.files, o.overwrite);
  return session.run([&] { return train_iterations(o, state, identity, session); });
}

}  // namespace fiber::ppo
