// Generalized Advantage Estimation (Schulman et al. 2016) over one environment's segment.
#pragma once

#include <span>
#include <vector>

namespace fiber::ppo {

// For t = T-1 down to 0, with next_value = values[t+1] (last_value for t = T-1) and
// nonterminal = 1 - episode_ended[t]:
//   delta_t     = rewards[t] + gamma * next_value * nonterminal - values[t]
//   advantage_t = delta_t + gamma * lambda * nonterminal * advantage_{t+1}
// episode_ended[t] marks a step after which the next value belongs to another episode
// (terminated or truncated); a truncated step's reward should already include
// gamma * V(final observation), so that cutting an episode short is not mistaken for an end.
// last_value is V of the observation after the last step (ignored if that step ended an
// episode). The returns (value targets) are advantages + values. Sizes must agree
// (std::invalid_argument).
std::vector<double> gae_advantages(std::span<const double> rewards, std::span<const double> values,
                                   std::span<const unsigned char> episode_ended, double last_value,
                                   double gamma, double lambda);

}  // namespace fiber::ppo
