#include "rollout.hpp"

#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

#include "actor_critic.hpp"
#include "environment_state.hpp"
#include "envs/environment.hpp"
#include "policy/normalizer.hpp"
#include "run/eigen_conversions.hpp"

namespace fiber::ppo {
namespace {

using rl::to_eigen;

// The task process's state: set by ppo_setup (once per pool) and ppo_set_policy (per iteration).
struct WorkerState {
  Settings settings;
  std::unique_ptr<rl::Environment> environment;  // runs the slots' segments in turn
  std::unique_ptr<rl::Environment> evaluation;   // runs evaluation episodes
  ActorCritic model;
  std::int64_t iteration = -1;  // of the policy held; -1: none yet
  Eigen::VectorXd observation_mean, observation_std;
};

WorkerState& state() {
  static WorkerState instance;
  return instance;
}

WorkerState& ready_state() {
  auto& s = state();
  if (!s.environment || s.iteration < 0) {
    throw std::logic_error("fiber-ppo: a task ran before ppo_setup/ppo_set_policy");
  }
  return s;
}

Eigen::VectorXd normalized(const WorkerState& s, const Eigen::VectorXd& observation) {
  return rl::normalize_observation(observation, s.observation_mean, s.observation_std,
                                   s.settings.observation_clip);
}

// What the environment is given: a continuous action clipped to the action space's bounds, as
// CleanRL's ClipAction wrapper does (Humanoid-v5, as Gymnasium, would take it as given and charge
// its control cost on it). The segment keeps the unclipped sample, whose log-probability the
// update needs. A NaN stays NaN, for the environment to refuse.
Eigen::VectorXd clipped_for(const rl::ActionSpace& space, const Eigen::VectorXd& action) {
  if (space.discrete) return action;
  Eigen::VectorXd clipped(action.size());
  for (Eigen::Index i = 0; i < action.size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    clipped(i) = std::clamp(action(i), space.low[k], space.high[k]);
  }
  return clipped;
}

// The simulated cost of `steps` steps (--step-sleep-us), slept in one go: one call per step
// would cost CPU itself.
void simulate_step_cost(const WorkerState& s, std::int64_t steps) {
  if (s.settings.step_sleep_us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(s.settings.step_sleep_us * steps));
  }
}

}  // namespace

std::uint64_t mix_seed(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t index) {
  std::uint64_t z = run_seed;
  for (std::uint64_t part : {stream, index}) {
    z += 0x9e3779b97f4a7c15ULL + part;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
  }
  return z;
}

void ppo_setup(Settings settings) {
  auto& s = state();
  s.environment = rl::make_environment(settings.environment);
  s.evaluation = rl::make_environment(settings.environment);
  const auto& space = s.environment->action_space();
  s.model = ActorCritic(s.environment->observation_size(), settings.hidden, space.discrete,
                        space.size, 0.0, 0);
  s.settings = std::move(settings);
  s.iteration = -1;
}

void ppo_set_policy(PolicySnapshot snapshot) {
  auto& s = state();
  s.model.set_parameters(to_eigen(snapshot.parameters));
  s.observation_mean = to_eigen(snapshot.observation_mean);
  s.observation_std = to_eigen(snapshot.observation_std);
  s.iteration = snapshot.iteration;
}

Segment ppo_collect(SegmentTask task) {
  const auto started = std::chrono::steady_clock::now();
  auto& s = ready_state();
  if (task.iteration != s.iteration) {
    throw std::logic_error("fiber-ppo: a segment of iteration " + std::to_string(task.iteration) +
                           " on a worker holding the policy of iteration " +
                           std::to_string(s.iteration));
  }
  rl::Environment& env = *s.environment;
  const auto steps = static_cast<Eigen::Index>(task.steps);
  const auto observation_size = env.observation_size();
  const auto slot_stream = static_cast<std::uint64_t>(task.slot.slot) << 8;
  const auto reset_seed = [&](std::int64_t episode) {
    return mix_seed(s.settings.seed, kResetStream + slot_stream,
                    static_cast<std::uint64_t>(episode));
  };
  std::mt19937_64 rng(mix_seed(s.settings.seed, kActionStream + slot_stream,
                               static_cast<std::uint64_t>(task.iteration)));

  Segment out;
  out.iteration = task.iteration;
  out.next = std::move(task.slot);
  SlotState& slot = out.next;
  out.observations.resize(observation_size, steps);
  out.actions.resize(env.action_space().dimension(), steps);
  for (auto* v : {&out.log_probs, &out.values, &out.rewards, &out.truncation_values}) {
    v->assign(static_cast<std::size_t>(steps), 0.0);
  }
  out.terminated.assign(static_cast<std::size_t>(steps), 0);
  out.truncated.assign(static_cast<std::size_t>(steps), 0);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(observation_size);
  Eigen::VectorXd sumsq = Eigen::VectorXd::Zero(observation_size);

  Eigen::VectorXd raw =
      slot.physics.empty() ? env.reset(reset_seed(slot.episode)) : restore_state(env, slot.physics);
  for (Eigen::Index t = 0; t < steps; ++t) {
    const auto k = static_cast<std::size_t>(t);
    sum += raw;
    sumsq.array() += raw.array().square();
    const Eigen::VectorXd observation = normalized(s, raw);
    double log_prob = 0;
    const Eigen::VectorXd action = s.model.sample(observation, rng, log_prob);
    out.observations.col(t) = observation;
    out.actions.col(t) = action;
    out.log_probs[k] = log_prob;
    out.values[k] = s.model.value_of(observation);

    rl::StepResult step = env.step(clipped_for(env.action_space(), action));
    ++slot.episode_steps;
    slot.episode_return += step.reward;
    out.rewards[k] = step.reward;
    // The slot counts the episode's steps: the environment's own count restarts at a restore.
    const bool truncated = !step.terminated && slot.episode_steps >= env.max_episode_steps();
    out.terminated[k] = step.terminated;
    out.truncated[k] = truncated;
    if (step.terminated || truncated) {
      if (truncated) out.truncation_values[k] = s.model.value_of(normalized(s, step.observation));
      out.finished_returns.push_back(slot.episode_return);
      out.finished_lengths.push_back(slot.episode_steps);
      out.finished_episodes.push_back(slot.episode);
      out.finished_terminated.push_back(step.terminated ? 1 : 0);
      ++slot.episode;
      slot.episode_steps = 0;
      slot.episode_return = 0;
      raw = env.reset(reset_seed(slot.episode));
    } else {
      raw = std::move(step.observation);
    }
  }
  out.last_value = s.model.value_of(normalized(s, raw));
  slot.physics = capture_state(env);
  simulate_step_cost(s, steps);
  out.raw_observation_sum.assign(sum.data(), sum.data() + sum.size());
  out.raw_observation_sumsq.assign(sumsq.data(), sumsq.data() + sumsq.size());
  const fiber::WorkerInfo& worker = fiber::this_worker();
  out.worker = worker.id;
  out.host = worker.host;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

EvaluationResult ppo_evaluate(std::uint64_t seed) {
  auto& s = ready_state();
  rl::Environment& env = *s.evaluation;
  EvaluationResult result;
  Eigen::VectorXd raw = env.reset(seed);
  for (;;) {
    rl::StepResult step =
        env.step(clipped_for(env.action_space(), s.model.mode(normalized(s, raw))));
    result.episode_return += step.reward;
    ++result.length;
    if (step.terminated || step.truncated) break;
    raw = std::move(step.observation);
  }
  simulate_step_cost(s, result.length);
  return result;
}

}  // namespace fiber::ppo

FIBER_TASK(fiber::ppo::ppo_setup);
FIBER_TASK(fiber::ppo::ppo_set_policy);
FIBER_TASK(fiber::ppo::ppo_collect);
FIBER_TASK(fiber::ppo::ppo_evaluate);
