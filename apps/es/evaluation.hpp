// The worker side of fiber-es: what a generation's tasks need (set once per pool and once per
// generation) and the tasks themselves. Tasks carry only noise indices and seeds; parameters
// arrive once per worker per generation (Pool::broadcast), the noise table is one copy per node
// (fiber::NodeArray).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

namespace fiber::es {

// Fixed for a run: the pool's initializer.
struct Settings {
  std::string environment;
  std::vector<long> layers;  // observation size, hidden sizes, action outputs
  double sigma = 0.02;
  std::int64_t noise_size = 0;
  std::uint64_t noise_seed = 0;
  bool record_observations = true;
  int episodes_per_perturbation = 1;  // a perturbation's return: the mean over this many episodes
  bool common_start_states = false;   // every perturbation of a task starts from the same states
  bool squash_actions = false;        // continuous actions: tanh into the bounds, not clipped
  int step_sleep_us = 0;  // simulated cost of a step, slept at the episode's end (benchmarks)

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& environment& layers& sigma& noise_size& noise_seed& record_observations&
        episodes_per_perturbation& common_start_states& squash_actions& step_sleep_us;
  }
};

// What changes each generation: broadcast to every worker.
struct Generation {
  std::int64_t number = 0;
  std::vector<double> theta;
  std::vector<double> observation_mean, observation_std;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& number& theta& observation_mean& observation_std;
  }
};

// One task: antithetic pairs (theta + sigma * eps, theta - sigma * eps) for each noise index, or
// with index -1 the unperturbed policy once (evaluation, seed). Each member of the k-th pair runs
// Settings::episodes_per_perturbation episodes (E) from seeds seed + k * E + j, j < E, or, with
// Settings::common_start_states, from seed + j whatever k.
struct EpisodeBatch {
  std::vector<std::int64_t> noise_indices;
  std::uint64_t seed = 0;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& noise_indices& seed;
  }
};

struct BatchResult {
  std::int64_t generation = 0;
  std::vector<double> returns_positive, returns_negative;  // negative: empty for evaluation
  std::vector<std::int64_t> lengths;                       // every episode's steps
  std::vector<double> episode_returns;                     // every episode's, as `lengths`
  std::vector<double> observation_sum, observation_sumsq;
  double observation_count = 0;
  // Per task, in task order: where it ran, its wall seconds and how many episodes it ran.
  std::vector<int> task_workers;
  std::vector<std::string> task_hosts;
  std::vector<double> task_seconds;
  std::vector<std::int64_t> task_episodes;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& generation& returns_positive& returns_negative& lengths& episode_returns&
        observation_sum& observation_sumsq& observation_count& task_workers& task_hosts&
            task_seconds& task_episodes;
  }
};

// The tasks (registered with FIBER_TASK in evaluation.cpp).
void es_setup(Settings settings);
void es_set_generation(Generation generation);
BatchResult es_evaluate(EpisodeBatch batch);
// Two batches' results as one, in order: returns, lengths and the per-task fields of `a` then
// `b`, observation sums
// added. What Pool::map_reduce folds a generation's batches with, on each node, so that the
// master gets one set of observation sums per node instead of one per task.
BatchResult es_merge_results(BatchResult a, const BatchResult& b);
// sum_i weights[i] * noise[indices[i] .. + dim): a part of the gradient, computed where the
// noise table is; the parts are summed on each node (es_add_vectors), so that the master only
// adds one vector per node.
std::vector<double> es_gradient_part(std::vector<std::int64_t> indices,
                                     std::vector<double> weights);
std::vector<double> es_add_vectors(std::vector<double> a, const std::vector<double>& b);

// The noise table's content: standard normal float32 from the seed (the same on every node).
void fill_noise(std::span<float> table, std::uint64_t seed);
std::string noise_table_name(std::int64_t size, std::uint64_t seed);

}  // namespace fiber::es
