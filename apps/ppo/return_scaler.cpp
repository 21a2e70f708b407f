#include "return_scaler.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace fiber::ppo {

ReturnScaler::ReturnScaler(int environments, double gamma) : gamma_(gamma) {
  state_.returns.assign(static_cast<std::size_t>(environments), 0.0);
}

std::vector<double> ReturnScaler::scale(const std::vector<double>& rewards,
                                        const std::vector<unsigned char>& episode_ended) {
  auto& r = state_.returns;
  if (rewards.size() != r.size() || episode_ended.size() != r.size()) {
    throw std::invalid_argument("ReturnScaler: one reward and one end flag per environment");
  }
  double batch_mean = 0;
  for (std::size_t k = 0; k < r.size(); ++k) {
    r[k] = r[k] * gamma_ + rewards[k];
    batch_mean += r[k];
  }
  const double n = static_cast<double>(r.size());
  batch_mean /= n;
  double batch_variance = 0;
  for (double x : r) batch_variance += (x - batch_mean) * (x - batch_mean);
  batch_variance /= n;
  const double delta = batch_mean - state_.mean;
  const double total = state_.count + n;
  const double m2 = state_.variance * state_.count + batch_variance * n +
                    delta * delta * state_.count * n / total;
  state_.mean += delta * n / total;
  state_.variance = m2 / total;
  state_.count = total;

  std::vector<double> scaled(rewards.size());
  const double scale = 1.0 / std::sqrt(state_.variance + 1e-8);
  for (std::size_t k = 0; k < r.size(); ++k) {
    scaled[k] = rewards[k] * scale;
    if (episode_ended[k]) r[k] = 0;
  }
  return scaled;
}

void ReturnScaler::set_state(State state) {
  if (state.returns.size() != state_.returns.size()) {
    throw std::invalid_argument("ReturnScaler: state for " + std::to_string(state.returns.size()) +
                                " environments, this one has " +
                                std::to_string(state_.returns.size()));
  }
  state_ = std::move(state);
}

}  // namespace fiber::ppo
