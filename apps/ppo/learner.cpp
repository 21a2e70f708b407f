#include "learner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "part_threads.hpp"

namespace fiber::ppo {
namespace {

void add_weighted(LossTerms& sum, const LossTerms& terms, double weight) {
  sum.total += terms.total * weight;
  sum.policy += terms.policy * weight;
  sum.value += terms.value * weight;
  sum.entropy += terms.entropy * weight;
  sum.approx_kl += terms.approx_kl * weight;
  sum.clip_fraction += terms.clip_fraction * weight;
}

// Mean and standard deviation (n - 1) of a minibatch's advantages.
struct AdvantageScale {
  double mean = 0, std_dev = 1;
};

AdvantageScale advantage_scale(const Eigen::VectorXd& advantages) {
  const double mean = advantages.mean();
  const double std_dev = std::sqrt((advantages.array() - mean).square().sum() /
                                   static_cast<double>(advantages.size() - 1));
  return {mean, std_dev};
}

}  // namespace

double clip_gradient_norm(Eigen::VectorXd& gradient, double max_norm) {
  const double norm = gradient.norm();
  if (max_norm > 0 && norm > max_norm) gradient *= max_norm / (norm + 1e-6);
  return norm;
}

int gradient_parts(Eigen::Index minibatch_size) {
  return static_cast<int>(
      std::clamp<Eigen::Index>(minibatch_size / kSamplesPerPart, 1, kMaxGradientParts));
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
  const int parts = gradient_parts(minibatch_size);
  PartThreads threads(std::clamp(settings.threads, 1, parts));
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  Eigen::VectorXd parameters = model.parameters();
  Eigen::VectorXd gradient;
  UpdateReport report;
  std::vector<Batch> batches(static_cast<std::size_t>(parts));
  std::vector<Eigen::VectorXd> gradients(batches.size());
  std::vector<LossTerms> terms(batches.size());
  std::vector<pid_t> part_threads(batches.size());
  for (int epoch = 0; epoch < settings.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    report.loss = {};
    for (int m = 0; m < settings.minibatches; ++m) {
      const std::span<const Eigen::Index> rows(order.data() + m * minibatch_size,
                                               static_cast<std::size_t>(minibatch_size));
      AdvantageScale scale;
      if (settings.normalize_advantages) scale = advantage_scale(samples.advantages(rows));
      threads.run(parts, [&](int p) {
        const Eigen::Index first = p * minibatch_size / parts;
        const Eigen::Index last = (p + 1) * minibatch_size / parts;
        const auto part_rows =
            rows.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(last - first));
        const auto k = static_cast<std::size_t>(p);
        Batch& batch = batches[k];
        batch.observations = samples.observations(Eigen::all, part_rows);
        batch.actions = samples.actions(Eigen::all, part_rows);
        batch.old_log_probs = samples.log_probs(part_rows);
        batch.advantages = samples.advantages(part_rows);
        batch.returns = samples.returns(part_rows);
        if (settings.normalize_advantages) {
          batch.advantages = (batch.advantages.array() - scale.mean) / (scale.std_dev + 1e-8);
        }
        terms[k] = model.loss_share(batch, minibatch_size, settings.coefficients, &gradients[k]);
        part_threads[k] = gettid();
      });
      // Summed in part order, whichever thread computed which part.
      gradient = gradients[0];
      LossTerms minibatch_terms = terms[0];
      for (std::size_t k = 1; k < gradients.size(); ++k) {
        gradient += gradients[k];
        add_weighted(minibatch_terms, terms[k], 1.0);
      }
      clip_gradient_norm(gradient, settings.max_gradient_norm);
      adam.update(parameters, gradient);
      model.set_parameters(parameters);
      add_weighted(report.loss, minibatch_terms, 1.0 / settings.minibatches);
    }
  }
  std::sort(part_threads.begin(), part_threads.end());
  report.threads = static_cast<int>(std::unique(part_threads.begin(), part_threads.end()) -
                                    part_threads.begin());
  const double variance = (samples.returns.array() - samples.returns.mean()).square().mean();
  const Eigen::ArrayXd residual = samples.returns - samples.values;
  const double residual_variance = (residual - residual.mean()).square().mean();
  report.explained_variance =
      variance == 0 ? std::numeric_limits<double>::quiet_NaN() : 1 - residual_variance / variance;
  return report;
}

}  // namespace fiber::ppo
