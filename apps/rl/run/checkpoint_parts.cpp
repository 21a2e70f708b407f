#include "run/checkpoint_parts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "run/random_engine_text.hpp"
#include "storage/error.hpp"

namespace fiber::rl {

void put_optimizer(CheckpointWriter& checkpoint, const Adam& adam) {
  auto state = adam.state();
  checkpoint.put("adam_m", std::move(state.m));
  checkpoint.put("adam_v", std::move(state.v));
  checkpoint.put("adam_t", state.t);
}

void get_optimizer(const CheckpointReader& checkpoint, Adam& adam) {
  adam.set_state(
      {checkpoint.vector("adam_m"), checkpoint.vector("adam_v"), checkpoint.uint64("adam_t")});
}

void put_observation_statistics(CheckpointWriter& checkpoint, const RunningNormalizer& normalizer) {
  auto state = normalizer.state();
  checkpoint.put("observation_sum", std::move(state.sum));
  checkpoint.put("observation_sumsq", std::move(state.sumsq));
  checkpoint.put("observation_count", state.count);
}

void get_observation_statistics(const CheckpointReader& checkpoint, RunningNormalizer& normalizer) {
  normalizer.set_state({checkpoint.vector("observation_sum"),
                        checkpoint.vector("observation_sumsq"),
                        checkpoint.float64("observation_count")});
}

void put_random_engine(CheckpointWriter& checkpoint, const std::mt19937_64& engine) {
  checkpoint.put("rng", engine_text(engine));
}

void get_random_engine(const CheckpointReader& checkpoint, std::mt19937_64& engine) {
  set_engine(engine, checkpoint.string("rng"));
}

void put_identity(CheckpointWriter& checkpoint, const RunIdentity& identity) {
  checkpoint.put("program", identity.program);
  checkpoint.put("environment", identity.environment);
  checkpoint.put("layers", identity.layers);
}

void check_identity(const CheckpointReader& checkpoint, const RunIdentity& expected) {
  const std::string path = checkpoint.path().string();
  if (checkpoint.has("program") && checkpoint.string("program") != expected.program) {
    throw CheckpointError(fmt::format("checkpoint {}: written by {}, not {}", path,
                                      checkpoint.string("program"), expected.program));
  }
  if (checkpoint.has("environment") && checkpoint.string("environment") != expected.environment) {
    throw CheckpointError(
        fmt::format("checkpoint {}: made for another environment, {}, not {} (--env?)", path,
                    checkpoint.string("environment"), expected.environment));
  }
  if (checkpoint.has("layers") && checkpoint.int64_vector("layers") != expected.layers) {
    throw CheckpointError(fmt::format(
        "checkpoint {}: made for a network of layers {}, this run's has {} (--hidden?)", path,
        fmt::join(checkpoint.int64_vector("layers"), "-"), fmt::join(expected.layers, "-")));
  }
}

std::vector<double> parameters(const CheckpointReader& checkpoint, std::size_t expected,
                               const char* network) {
  auto theta = checkpoint.vector("theta");
  if (theta.size() != expected) {
    throw CheckpointError(fmt::format(
        "checkpoint {}: made for a {} of {} parameters, this run's has {} (another environment "
        "or --hidden?)",
        checkpoint.path().string(), network, theta.size(), expected));
  }
  return theta;
}

}  // namespace fiber::rl
