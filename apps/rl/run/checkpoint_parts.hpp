// Checkpoint entries that fiber-es and fiber-ppo write alike. Their names are part of the
// checkpoint format that h5py readers see (docs/guide/rl.md "HDF5 files of fiber-es"): keep
// them.
//
//   rl::CheckpointWriter w;
//   rl::put_optimizer(w, state.adam);          // adam_m, adam_v, adam_t
//   ...
//   rl::CheckpointReader r(path);
//   auto theta = rl::parameters(r, state.theta.size(), "policy");
//   rl::get_optimizer(r, state.adam);
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "policy/adam.hpp"
#include "policy/normalizer.hpp"
#include "storage/checkpoint.hpp"

namespace fiber::rl {

// adam_m, adam_v, adam_t: Adam's moments and step count.
void put_optimizer(CheckpointWriter& checkpoint, const Adam& adam);
void get_optimizer(const CheckpointReader& checkpoint, Adam& adam);

// observation_sum, observation_sumsq, observation_count: the running observation statistics.
void put_observation_statistics(CheckpointWriter& checkpoint, const RunningNormalizer& normalizer);
void get_observation_statistics(const CheckpointReader& checkpoint, RunningNormalizer& normalizer);

// rng: the random engine's state, in the standard library's text form.
void put_random_engine(CheckpointWriter& checkpoint, const std::mt19937_64& engine);
void get_random_engine(const CheckpointReader& checkpoint, std::mt19937_64& engine);

// What a checkpoint can be resumed by: the program that wrote it, the environment and the layer
// sizes of the network (observation, hidden..., action).
struct RunIdentity {
  std::string program;  // "fiber-es", "fiber-ppo"
  std::string environment;
  std::vector<std::int64_t> layers;
};

// program, environment, layers.
void put_identity(CheckpointWriter& checkpoint, const RunIdentity& identity);
// A CheckpointError (one line: which of them differs, and the option to look at) unless the
// checkpoint was written by a run of `expected`. A checkpoint of a fiber version that did not
// record them passes (its parameter count is still checked by parameters()).
void check_identity(const CheckpointReader& checkpoint, const RunIdentity& expected);

// theta, the network's parameters; a CheckpointError unless there are `expected` of them (the
// checkpoint was made for another environment or network shape). `network` names it.
std::vector<double> parameters(const CheckpointReader& checkpoint, std::size_t expected,
                               const char* network);

}  // namespace fiber::rl
