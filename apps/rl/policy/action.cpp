#include "policy/action.hpp"

#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

namespace fiber::rl {

namespace {

void check_bounds(const ActionBounds& bounds) {
  if (bounds.low.size() != bounds.high.size()) {
    throw std::invalid_argument("ActionBounds: low has " + std::to_string(bounds.low.size()) +
                                " values, high " + std::to_string(bounds.high.size()));
  }
  if ((bounds.low.array() > bounds.high.array()).any()) {
    throw std::invalid_argument("ActionBounds: low > high in some dimension");
  }
}

}  // namespace

Eigen::VectorXd clip_action(const Eigen::VectorXd& action, const ActionBounds& bounds) {
  check_bounds(bounds);
  if (action.size() != bounds.low.size()) {
    throw std::invalid_argument("clip_action: action has " + std::to_string(action.size()) +
                                " values, the bounds " + std::to_string(bounds.low.size()));
  }
  return action.cwiseMax(bounds.low).cwiseMin(bounds.high);
}

// --- DiscretePolicy ---

Eigen::Index DiscretePolicy::deterministic(const Eigen::VectorXd& logits) {
  if (logits.size() == 0) throw std::invalid_argument("DiscretePolicy: no logits");
  Eigen::Index best = 0;
  double best_value = -std::numeric_limits<double>::infinity();
  bool found = false;
  for (Eigen::Index i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    if (!found || logits[i] > best_value) {
      best = i;
      best_value = logits[i];
      found = true;
    }
  }
  return best;
}

Eigen::VectorXd DiscretePolicy::log_probabilities(const Eigen::VectorXd& logits) {
  if (logits.size() == 0) throw std::invalid_argument("DiscretePolicy: no logits");
  const double max = logits.maxCoeff();
  const Eigen::ArrayXd shifted = logits.array() - max;
  return (shifted - std::log(shifted.exp().sum())).matrix();
}

Eigen::VectorXd DiscretePolicy::probabilities(const Eigen::VectorXd& logits) {
  if (logits.size() == 0) throw std::invalid_argument("DiscretePolicy: no logits");
  const Eigen::ArrayXd e = (logits.array() - logits.maxCoeff()).exp();
  return (e / e.sum()).matrix();
}

double DiscretePolicy::log_prob(const Eigen::VectorXd& logits, Eigen::Index action) {
  if (action < 0 || action >= logits.size()) {
    throw std::out_of_range("DiscretePolicy: action " + std::to_string(action) + " of " +
                            std::to_string(logits.size()));
  }
  return log_probabilities(logits)[action];
}

Eigen::VectorXd DiscretePolicy::log_prob_gradient(const Eigen::VectorXd& logits,
                                                  Eigen::Index action) {
  if (action < 0 || action >= logits.size()) {
    throw std::out_of_range("DiscretePolicy: action " + std::to_string(action) + " of " +
                            std::to_string(logits.size()));
  }
  Eigen::VectorXd gradient = -probabilities(logits);
  gradient[action] += 1.0;
  return gradient;
}

double DiscretePolicy::entropy(const Eigen::VectorXd& logits) {
  const Eigen::VectorXd log_p = log_probabilities(logits);
  return -(log_p.array().exp() * log_p.array()).sum();
}

Eigen::VectorXd DiscretePolicy::entropy_gradient(const Eigen::VectorXd& logits) {
  const Eigen::ArrayXd log_p = log_probabilities(logits).array();
  const Eigen::ArrayXd p = log_p.exp();
  const double h = -(p * log_p).sum();
  return (-p * (log_p + h)).matrix();
}

// --- ContinuousPolicy ---

ContinuousPolicy::ContinuousPolicy(ActionBounds bounds)
    : ContinuousPolicy(bounds, Eigen::VectorXd::Zero(bounds.low.size())) {}

ContinuousPolicy::ContinuousPolicy(ActionBounds bounds, const Eigen::VectorXd& log_std)
    : bounds_(std::move(bounds)) {
  check_bounds(bounds_);
  set_log_std(log_std);
}

void ContinuousPolicy::set_log_std(const Eigen::VectorXd& log_std) {
  if (log_std.size() != bounds_.low.size()) {
    throw std::invalid_argument("ContinuousPolicy: log_std has " + std::to_string(log_std.size()) +
                                " values, the action space " + std::to_string(bounds_.low.size()));
  }
  log_std_ = log_std;
}

void ContinuousPolicy::check_size(const Eigen::VectorXd& v) const {
  if (v.size() != action_size()) {
    throw std::invalid_argument("ContinuousPolicy: got " + std::to_string(v.size()) +
                                " values for an action space of " + std::to_string(action_size()));
  }
}

Eigen::VectorXd ContinuousPolicy::deterministic(const Eigen::VectorXd& mean) const {
  return clip(mean);
}

Eigen::VectorXd ContinuousPolicy::clip(const Eigen::VectorXd& action) const {
  check_size(action);
  return action.cwiseMax(bounds_.low).cwiseMin(bounds_.high);
}

double ContinuousPolicy::log_prob(const Eigen::VectorXd& mean,
                                  const Eigen::VectorXd& action) const {
  check_size(mean);
  check_size(action);
  const Eigen::ArrayXd z = (action - mean).array() * (-log_std_.array()).exp();
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  return -0.5 * z.square().sum() - log_std_.sum() -
         0.5 * log_2pi * static_cast<double>(action.size());
}

Eigen::VectorXd ContinuousPolicy::log_prob_gradient_mean(const Eigen::VectorXd& mean,
                                                         const Eigen::VectorXd& action) const {
  check_size(mean);
  check_size(action);
  return ((action - mean).array() * (-2.0 * log_std_.array()).exp()).matrix();
}

Eigen::VectorXd ContinuousPolicy::log_prob_gradient_log_std(const Eigen::VectorXd& mean,
                                                            const Eigen::VectorXd& action) const {
  check_size(mean);
  check_size(action);
  const Eigen::ArrayXd z = (action - mean).array() * (-log_std_.array()).exp();
  return (z.square() - 1.0).matrix();
}

double ContinuousPolicy::entropy() const {
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  return log_std_.sum() + static_cast<double>(log_std_.size()) * (0.5 + 0.5 * log_2pi);
}

// --- act ---

Eigen::Index act_discrete(const Mlp& mlp, const Eigen::VectorXd& observation) {
  return DiscretePolicy::deterministic(mlp.forward(observation));
}

Eigen::VectorXd act_continuous(const Mlp& mlp, const Eigen::VectorXd& observation,
                               const ActionBounds& bounds) {
  return clip_action(mlp.forward(observation), bounds);
}

Eigen::VectorXd act_squashed(const Mlp& mlp, const Eigen::VectorXd& observation,
                             const ActionBounds& bounds) {
  check_bounds(bounds);
  const Eigen::VectorXd output = mlp.forward(observation);
  if (output.size() != bounds.low.size()) {
    throw std::invalid_argument("act_squashed: the network gives " + std::to_string(output.size()) +
                                " values, the bounds " + std::to_string(bounds.low.size()));
  }
  const Eigen::ArrayXd unit = (output.array().tanh() + 1.0) * 0.5;
  return (bounds.low.array() + unit * (bounds.high - bounds.low).array()).matrix();
}

Eigen::VectorXd act(const Mlp& mlp, const Eigen::VectorXd& observation, ActionKind kind,
                    const ActionBounds& bounds) {
  switch (kind) {
    case ActionKind::kDiscrete:
      return Eigen::VectorXd::Constant(1, static_cast<double>(act_discrete(mlp, observation)));
    case ActionKind::kContinuous:
      return act_continuous(mlp, observation, bounds);
    case ActionKind::kSquashed:
      return act_squashed(mlp, observation, bounds);
  }
  throw std::invalid_argument("act: unknown action kind");
}

}  // namespace fiber::rl
