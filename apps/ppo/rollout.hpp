// The worker side of fiber-ppo: rollouts of fixed-length segments.
//
// Determinism whatever the number of workers: the run has a fixed number of environment slots,
// and each iteration is one task per slot. The pool may give a slot to another worker next
// iteration, so a slot's episode state travels with its task and comes back with its segment:
// the environment's physical state (a few numbers, or a humanoid's MuJoCo state:
// environment_state.hpp), the episode's index,
// step count and return so far. Reset seeds derive from (run seed, slot, episode index) and the
// action-sampling RNG from (run seed, slot, iteration): never from which worker runs it. Each
// worker keeps its environment objects from the pool's initializer (ppo_setup) for the whole run
// and receives the policy once per iteration (ppo_set_policy through Pool::broadcast). So one
// worker or eight produce the same trajectories bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include "policy/eigen_serialization.hpp"

namespace fiber::ppo {

// Fixed for a run: the pool's initializer.
struct Settings {
  std::string environment;
  std::vector<long> hidden;
  std::uint64_t seed = 0;
  double observation_clip = 10.0;
  int step_sleep_us = 0;  // simulated cost of a step, slept at the task's end (benchmarks)

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& environment& hidden& seed& observation_clip& step_sleep_us;
  }
};

// What changes each iteration: broadcast to every worker.
struct PolicySnapshot {
  std::int64_t iteration = 0;
  std::vector<double> parameters;  // ActorCritic::parameters()
  std::vector<double> observation_mean, observation_std;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& iteration& parameters& observation_mean& observation_std;
  }
};

// Where an environment slot's episode stands between segments.
struct SlotState {
  std::int64_t slot = 0;
  std::vector<double> physics;     // the environment's state (capture_state); empty: not begun
  std::int64_t episode = 0;        // index of the slot's current episode (seeds its reset)
  std::int64_t episode_steps = 0;  // steps of the current episode so far
  double episode_return = 0;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& slot& physics& episode& episode_steps& episode_return;
  }
};

struct SegmentTask {
  std::int64_t iteration = 0;
  int steps = 0;
  SlotState slot;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& iteration& steps& slot;
  }
};

// One slot's segment: `steps` transitions, one per column (entry).
struct Segment {
  std::int64_t iteration = 0;
  SlotState next;                // the slot's state after the segment
  Eigen::MatrixXd observations;  // normalized, as the policy saw them
  Eigen::MatrixXd actions;       // discrete: 1 x T indices; continuous: unclipped samples
  std::vector<double> log_probs, values, rewards;
  std::vector<unsigned char> terminated, truncated;
  // V(final observation) for truncated steps (0 elsewhere): the caller adds gamma times it to
  // the reward, as an episode cut by the time limit has not ended.
  std::vector<double> truncation_values;
  double last_value = 0;  // V(observation after the segment)
  std::vector<double> raw_observation_sum, raw_observation_sumsq;  // for the normalizer
  std::vector<double> finished_returns;  // episodes that ended in this segment
  std::vector<std::int64_t> finished_lengths;
  std::vector<std::int64_t> finished_episodes;     // their index in the slot
  std::vector<unsigned char> finished_terminated;  // 1: terminated, 0: truncated (time limit)
  int worker = -1;  // where the segment ran, and its wall seconds there
  std::string host;
  double seconds = 0;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& iteration& next& observations& actions& log_probs& values& rewards& terminated&
        truncated& truncation_values& last_value& raw_observation_sum& raw_observation_sumsq&
            finished_returns& finished_lengths& finished_episodes& finished_terminated& worker&
                host& seconds;
  }
};

struct EvaluationResult {
  double episode_return = 0;
  std::int64_t length = 0;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& episode_return& length;
  }
};

// Seeds: a splitmix64 mix of the parts, so that streams of different slots do not overlap.
std::uint64_t mix_seed(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t index);
constexpr std::uint64_t kResetStream = 1;   // + slot << 8: reset seeds, by episode
constexpr std::uint64_t kActionStream = 2;  // + slot << 8: action sampling, by iteration
constexpr std::uint64_t kEvaluationStream = 3;

// The tasks (registered with FIBER_TASK in rollout.cpp).
void ppo_setup(Settings settings);
void ppo_set_policy(PolicySnapshot snapshot);
Segment ppo_collect(SegmentTask task);
// One episode of the deterministic policy from reset(seed).
EvaluationResult ppo_evaluate(std::uint64_t seed);

}  // namespace fiber::ppo
