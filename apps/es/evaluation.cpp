#include "evaluation.hpp"

#include <fiber/fiber.hpp>

#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

#include "envs/environment.hpp"
#include "policy/action.hpp"
#include "policy/mlp.hpp"
#include "policy/normalizer.hpp"

namespace fiber::es {
namespace {

// The task process's state: set by es_setup (once per pool) and es_set_generation.
struct WorkerState {
  Settings settings;
  std::unique_ptr<rl::Environment> environment;
  rl::Mlp policy;
  rl::ActionKind kind = rl::ActionKind::kDiscrete;
  rl::ActionBounds bounds;
  fiber::NodeArray<float> noise;
  Generation generation;
  bool has_generation = false;
};

WorkerState& state() {
  static WorkerState instance;
  return instance;
}

WorkerState& ready_state() {
  auto& s = state();
  if (!s.environment || !s.has_generation) {
    throw std::logic_error("fiber-es: a task ran before es_setup/es_set_generation");
  }
  return s;
}

Eigen::Map<const Eigen::VectorXf> noise_at(const WorkerState& s, std::int64_t index) {
  auto dim = s.policy.parameter_count();
  if (index < 0 || index + dim > s.settings.noise_size) {
    throw std::out_of_range("fiber-es: noise index out of the table");
  }
  return {s.noise.data() + index, dim};
}

// Runs one episode with the given parameters; returns the return, adds to the statistics.
double run_episode(WorkerState& s, const Eigen::VectorXd& parameters, std::uint64_t seed,
                   std::int64_t& length, BatchResult* observations) {
  s.policy.set_parameters(parameters);
  const auto& g = s.generation;
  Eigen::Map<const Eigen::VectorXd> mean(g.observation_mean.data(),
                                         static_cast<Eigen::Index>(g.observation_mean.size()));
  Eigen::Map<const Eigen::VectorXd> std_dev(g.observation_std.data(),
                                            static_cast<Eigen::Index>(g.observation_std.size()));
  Eigen::VectorXd observation = s.environment->reset(seed);
  double total = 0;
  length = 0;
  for (;;) {
    if (observations) {
      for (Eigen::Index i = 0; i < observation.size(); ++i) {
        observations->observation_sum[i] += observation[i];
        observations->observation_sumsq[i] += observation[i] * observation[i];
      }
      observations->observation_count += 1;
    }
    Eigen::VectorXd input = rl::normalize_observation(observation, mean, std_dev);
    auto step = s.environment->step(rl::act(s.policy, input, s.kind, s.bounds));
    total += step.reward;
    ++length;
    if (step.terminated || step.truncated) break;
    observation = std::move(step.observation);
  }
  // The simulated cost of the steps, slept in one go: one call per step would cost CPU itself.
  if (s.settings.step_sleep_us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(s.settings.step_sleep_us * length));
  }
  return total;
}

}  // namespace

std::string noise_table_name(std::int64_t size, std::uint64_t seed) {
  return "es-noise-" + std::to_string(size) + "-" + std::to_string(seed);
}

void fill_noise(std::span<float> table, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& value : table) value = normal(generator);
}

void es_setup(Settings settings) {
  auto& s = state();
  s.environment = rl::make_environment(settings.environment);
  std::vector<Eigen::Index> layers(settings.layers.begin(), settings.layers.end());
  s.policy = rl::Mlp(layers);
  const auto& space = s.environment->action_space();
  s.kind = space.discrete            ? rl::ActionKind::kDiscrete
           : settings.squash_actions ? rl::ActionKind::kSquashed
                                     : rl::ActionKind::kContinuous;
  if (!space.discrete) {
    s.bounds.low = Eigen::Map<const Eigen::VectorXd>(space.low.data(), space.size);
    s.bounds.high = Eigen::Map<const Eigen::VectorXd>(space.high.data(), space.size);
  }
  if (s.noise.size() != static_cast<std::size_t>(settings.noise_size)) {
    auto seed = settings.noise_seed;
    s.noise = fiber::NodeArray<float>::open(noise_table_name(settings.noise_size, seed),
                                            static_cast<std::size_t>(settings.noise_size),
                                            [seed](std::span<float> t) { fill_noise(t, seed); });
  }
  s.settings = std::move(settings);
  s.has_generation = false;
}

void es_set_generation(Generation generation) {
  state().generation = std::move(generation);
  state().has_generation = true;
}

BatchResult es_evaluate(EpisodeBatch batch) {
  const auto started = std::chrono::steady_clock::now();
  auto& s = ready_state();
  BatchResult result;
  result.generation = s.generation.number;
  auto observation_size = s.environment->observation_size();
  BatchResult* record = nullptr;
  if (s.settings.record_observations) {
    result.observation_sum.assign(observation_size, 0.0);
    result.observation_sumsq.assign(observation_size, 0.0);
    record = &result;
  }
  Eigen::Map<const Eigen::VectorXd> theta(s.generation.theta.data(),
                                          static_cast<Eigen::Index>(s.generation.theta.size()));
  const int episodes = s.settings.episodes_per_perturbation;
  const std::uint64_t stride = s.settings.common_start_states ? 0 : episodes;
  std::uint64_t seed = batch.seed;
  for (std::int64_t index : batch.noise_indices) {
    std::int64_t length = 0;
    if (index < 0) {  // evaluation of the unperturbed policy: no statistics from it
      result.returns_positive.push_back(run_episode(s, theta, seed++, length, nullptr));
      result.episode_returns.push_back(result.returns_positive.back());
      result.lengths.push_back(length);
      continue;
    }
    // Both members of a pair start from the same states: their difference is the perturbation's
    // effect, not the luck of the initial state.
    Eigen::VectorXd epsilon = noise_at(s, index).cast<double>() * s.settings.sigma;
    double positive = 0, negative = 0;
    for (int j = 0; j < episodes; ++j) {
      result.episode_returns.push_back(run_episode(s, theta + epsilon, seed + j, length, record));
      positive += result.episode_returns.back();
      result.lengths.push_back(length);
      result.episode_returns.push_back(run_episode(s, theta - epsilon, seed + j, length, record));
      negative += result.episode_returns.back();
      result.lengths.push_back(length);
    }
    result.returns_positive.push_back(positive / episodes);
    result.returns_negative.push_back(negative / episodes);
    seed += stride;
  }
  const fiber::WorkerInfo& worker = fiber::this_worker();
  result.task_workers.push_back(worker.id);
  result.task_hosts.push_back(worker.host);
  result.task_seconds.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  result.task_episodes.push_back(static_cast<std::int64_t>(result.lengths.size()));
  return result;
}

BatchResult es_merge_results(BatchResult a, const BatchResult& b) {
  if (a.generation != b.generation || a.observation_sum.size() != b.observation_sum.size()) {
    throw std::invalid_argument("fiber-es: results of different generations or policies merged");
  }
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(a.returns_positive, b.returns_positive);
  append(a.returns_negative, b.returns_negative);
  append(a.lengths, b.lengths);
  append(a.episode_returns, b.episode_returns);
  append(a.task_workers, b.task_workers);
  append(a.task_hosts, b.task_hosts);
  append(a.task_seconds, b.task_seconds);
  append(a.task_episodes, b.task_episodes);
  for (std::size_t i = 0; i < a.observation_sum.size(); ++i) {
    a.observation_sum[i] += b.observation_sum[i];
    a.observation_sumsq[i] += b.observation_sumsq[i];
  }
  a.observation_count += b.observation_count;
  return a;
}

std::vector<double> es_add_vectors(std::vector<double> a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("fiber-es: gradient parts of two sizes");
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

std::vector<double> es_gradient_part(std::vector<std::int64_t> indices,
                                     std::vector<double> weights) {
  auto& s = ready_state();
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(s.policy.parameter_count());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    sum += weights[i] * noise_at(s, indices[i]).cast<double>();
  }
  return {sum.data(), sum.data() + sum.size()};
}

}  // namespace fiber::es

FIBER_TASK(fiber::es::es_setup);
FIBER_TASK(fiber::es::es_set_generation);
FIBER_TASK(fiber::es::es_evaluate);
FIBER_TASK(fiber::es::es_merge_results);
FIBER_TASK(fiber::es::es_gradient_part);
FIBER_TASK(fiber::es::es_add_vectors);
