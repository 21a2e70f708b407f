// Reward scaling as Stable-Baselines3's VecNormalize: each environment keeps a discounted return
// (reset when its episode ends); rewards are divided by the running standard deviation of those
// returns (running mean and variance with Chan et al.'s parallel update, count starting at 1e-4).
// Runs on the master over the segments in slot order, so it does not depend on the workers.
#pragma once

#include <vector>

namespace fiber::ppo {

class ReturnScaler {
 public:
  struct State {
    double mean = 0, variance = 1, count = 1e-4;
    std::vector<double> returns;  // per environment slot
  };

  ReturnScaler() = default;
  ReturnScaler(int environments, double gamma);

  // One time step of every environment: rewards[k] and whether k's episode ended with it.
  // Returns the scaled rewards.
  std::vector<double> scale(const std::vector<double>& rewards,
                            const std::vector<unsigned char>& episode_ended);

  const State& state() const { return state_; }
  void set_state(State state);  // the number of slots must agree (std::invalid_argument)

 private:
  double gamma_ = 0.99;
  State state_;
};

}  // namespace fiber::ppo
