#include "gae.hpp"

#include <stdexcept>
#include <string>

namespace fiber::ppo {

std::vector<double> gae_advantages(std::span<const double> rewards, std::span<const double> values,
                                   std::span<const unsigned char> episode_ended, double last_value,
                                   double gamma, double lambda) {
  if (values.size() != rewards.size() || episode_ended.size() != rewards.size()) {
    throw std::invalid_argument("gae_advantages: " + std::to_string(rewards.size()) + " rewards, " +
                                std::to_string(values.size()) + " values and " +
                                std::to_string(episode_ended.size()) + " episode ends");
  }
  std::vector<double> advantages(rewards.size());
  double next_advantage = 0.0;
  double next_value = last_value;
  for (std::size_t t = rewards.size(); t-- > 0;) {
    const double nonterminal = episode_ended[t] ? 0.0 : 1.0;
    const double delta = rewards[t] + gamma * next_value * nonterminal - values[t];
    next_advantage = delta + gamma * lambda * nonterminal * next_advantage;
    advantages[t] = next_advantage;
    next_value = values[t];
  }
  return advantages;
}

}  // namespace fiber::ppo
