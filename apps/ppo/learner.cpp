#include "learner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

namespace fiber::ppo {

double clip_gradient_norm(Eigen::VectorXd& gradient, double max_norm) {
  const double norm = gradient.norm();
  if (max_norm > 0 && norm > max_norm) gradient *= max_norm / (norm + 1e-6);
  return norm;
}

UpdateReport ppo_update(ActorCritic& model, rl::Adam& adam, const Samples& samples,
                        const UpdateSettings& settings, std::mt19937_64& rng) {
  const Eigen::Index n = samples.observations.cols();
  const Eigen::Index minibatch_size = n / settings.minibatches;
  if (minibatch_size < 2) {
    throw std::invalid_argument("ppo_update: " + std::to_string(n) + " samples cut into " +
                                std::to_string(settings.minibatches) +
                                " minibatches leave fewer than 2 per minibatch");
  }
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  Eigen::VectorXd parameters = model.parameters();
  Eigen::VectorXd gradient;
  UpdateReport report;
  Batch batch;
  for (int epoch = 0; epoch < settings.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    report.loss = {};
    for (int m = 0; m < settings.minibatches; ++m) {
      const std::span<const Eigen::Index> rows(order.data() + m * minibatch_size,
                                               static_cast<std::size_t>(minibatch_size));
      batch.observations = samples.observations(Eigen::all, rows);
      batch.actions = samples.actions(Eigen::all, rows);
      batch.old_log_probs = samples.log_probs(rows);
      batch.advantages = samples.advantages(rows);
      batch.returns = samples.returns(rows);
      if (settings.normalize_advantages) {
        const double mean = batch.advantages.mean();
        const double std_dev = std::sqrt((batch.advantages.array() - mean).square().sum() /
                                         static_cast<double>(minibatch_size - 1));
        batch.advantages = (batch.advantages.array() - mean) / (std_dev + 1e-8);
      }
      const LossTerms terms = model.loss(batch, settings.coefficients, &gradient);
      clip_gradient_norm(gradient, settings.max_gradient_norm);
      adam.update(parameters, gradient);
      model.set_parameters(parameters);
      report.loss.total += terms.total / settings.minibatches;
      report.loss.policy += terms.policy / settings.minibatches;
      report.loss.value += terms.value / settings.minibatches;
      report.loss.entropy += terms.entropy / settings.minibatches;
      report.loss.approx_kl += terms.approx_kl / settings.minibatches;
      report.loss.clip_fraction += terms.clip_fraction / settings.minibatches;
    }
  }
  const double variance = (samples.returns.array() - samples.returns.mean()).square().mean();
  const Eigen::ArrayXd residual = samples.returns - samples.values;
  const double residual_variance = (residual - residual.mean()).square().mean();
  report.explained_variance =
      variance == 0 ? std::numeric_limits<double>::quiet_NaN() : 1 - residual_variance / variance;
  return report;
}

}  // namespace fiber::ppo
