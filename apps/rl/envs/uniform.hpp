// fiber::rl::UniformRng: the environments' source of initial states. A std::mt19937_64 seeded with
// the reset seed, turned into doubles by hand (53 random bits) rather than with
// std::uniform_real_distribution, whose output is not specified across standard libraries: the
// same seed gives the same episode whichever compiler built the worker.
#pragma once

#include <cstdint>
#include <random>

namespace fiber::rl {

class UniformRng {
 public:
  explicit UniformRng(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Uniform in [low, high), as numpy's Generator.uniform(low, high).
  double uniform(double low, double high) { return low + (high - low) * unit(); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace fiber::rl
