#include "actor_critic.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace fiber::ppo {
namespace {

std::vector<Eigen::Index> layer_sizes(long inputs, const std::vector<long>& hidden, long outputs) {
  std::vector<Eigen::Index> sizes{inputs};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(outputs);
  return sizes;
}

void scale_output_rows(rl::Mlp& mlp, double norm) {
  auto w = mlp.weights(mlp.layer_count() - 1);
  for (Eigen::Index i = 0; i < w.rows(); ++i) w.row(i) *= norm / w.row(i).norm();
}

const double kHalfLog2Pi = 0.5 * std::log(2.0 * std::numbers::pi);

}  // namespace

ActorCritic::ActorCritic(long observation_size, const std::vector<long>& hidden, bool discrete,
                         long actions, double initial_log_std, std::uint64_t seed)
    : discrete_(discrete),
      policy_(layer_sizes(observation_size, hidden, actions), seed),
      value_(layer_sizes(observation_size, hidden, 1), seed + 1) {
  scale_output_rows(value_, 1.0);
  if (!discrete) log_std_ = Eigen::VectorXd::Constant(actions, initial_log_std);
}

Eigen::Index ActorCritic::parameter_count() const {
  return policy_.parameter_count() + log_std_.size() + value_.parameter_count();
}

Eigen::VectorXd ActorCritic::parameters() const {
  Eigen::VectorXd flat(parameter_count());
  flat << policy_.parameters(), log_std_, value_.parameters();
  return flat;
}

void ActorCritic::set_parameters(const Eigen::VectorXd& parameters) {
  if (parameters.size() != parameter_count()) {
    throw std::invalid_argument("ActorCritic: " + std::to_string(parameters.size()) +
                                " parameters given, the model has " +
                                std::to_string(parameter_count()));
  }
  const Eigen::Index p = policy_.parameter_count();
  const Eigen::Index s = log_std_.size();
  policy_.set_parameters(parameters.head(p));
  log_std_ = parameters.segment(p, s);
  value_.set_parameters(parameters.tail(value_.parameter_count()));
}

Eigen::VectorXd ActorCritic::mode(const Eigen::VectorXd& observation) const {
  Eigen::VectorXd out = policy_.forward(observation);
  if (!discrete_) return out;
  return Eigen::VectorXd::Constant(1, static_cast<double>(rl::DiscretePolicy::deterministic(out)));
}

double ActorCritic::value_of(const Eigen::VectorXd& observation) const {
  return value_.forward(observation)[0];
}

double ActorCritic::gaussian_log_prob(const Eigen::VectorXd& mean,
                                      const Eigen::VectorXd& action) const {
  const Eigen::ArrayXd z = (action - mean).array() * (-log_std_.array()).exp();
  return -0.5 * z.square().sum() - log_std_.sum() -
         kHalfLog2Pi * static_cast<double>(action.size());
}

LossTerms ActorCritic::loss(const Batch& batch, const LossCoefficients& c,
                            Eigen::VectorXd* gradient) const {
  return loss_share(batch, batch.observations.cols(), c, gradient);
}

LossTerms ActorCritic::loss_share(const Batch& batch, Eigen::Index minibatch_size,
                                  const LossCoefficients& c, Eigen::VectorXd* gradient) const {
  const Eigen::Index n = batch.observations.cols();
  if (n == 0 || batch.actions.cols() != n || batch.old_log_probs.size() != n ||
      batch.advantages.size() != n || batch.returns.size() != n || minibatch_size < n) {
    throw std::invalid_argument(
        "ActorCritic::loss: an empty batch, parts of different sizes or more samples than its "
        "minibatch");
  }
  // Means over the minibatch: each of this part's samples weighs 1 / minibatch_size.
  const double inv_n = 1.0 / static_cast<double>(minibatch_size);
  const double share = static_cast<double>(n) * inv_n;
  const rl::Mlp::ForwardCache policy_cache = policy_.forward_with_cache(batch.observations);
  const rl::Mlp::ForwardCache value_cache = value_.forward_with_cache(batch.observations);
  const Eigen::MatrixXd& out = policy_cache.outputs;

  // New log probabilities and entropies; what d log_prob / d outputs is, per head.
  Eigen::VectorXd log_probs(n);
  Eigen::VectorXd entropies(n);
  Eigen::MatrixXd log_softmax;  // discrete
  Eigen::MatrixXd z;            // continuous: (action - mean) / std
  if (discrete_) {
    log_softmax.resize(out.rows(), n);
    for (Eigen::Index b = 0; b < n; ++b) {
      log_softmax.col(b) = rl::DiscretePolicy::log_probabilities(out.col(b));
      const auto a = static_cast<Eigen::Index>(batch.actions(0, b));
      if (a < 0 || a >= out.rows()) throw std::invalid_argument("ActorCritic::loss: bad action");
      log_probs[b] = log_softmax(a, b);
      entropies[b] = -(log_softmax.col(b).array().exp() * log_softmax.col(b).array()).sum();
    }
  } else {
    if (batch.actions.rows() != out.rows()) {
      throw std::invalid_argument("ActorCritic::loss: actions of the wrong dimension");
    }
    const Eigen::ArrayXd inv_std = (-log_std_.array()).exp();
    z = ((batch.actions - out).array().colwise() * inv_std).matrix();
    const double constant = log_std_.sum() + kHalfLog2Pi * static_cast<double>(out.rows());
    log_probs = (-0.5 * z.array().square().colwise().sum()).matrix().transpose().array() - constant;
    entropies.setConstant(log_std_.sum() + static_cast<double>(out.rows()) * (0.5 + kHalfLog2Pi));
  }

  // Clipped surrogate: per sample max(-A r, -A clip(r)); d/d log_prob = -A r where the
  // unclipped term is the larger one, 0 where clipping holds it constant.
  LossTerms terms;
  Eigen::VectorXd d_log_prob(n);
  for (Eigen::Index b = 0; b < n; ++b) {
    const double log_ratio = log_probs[b] - batch.old_log_probs[b];
    const double ratio = std::exp(log_ratio);
    const double advantage = batch.advantages[b];
    const double unclipped = -advantage * ratio;
    const double clipped = -advantage * std::clamp(ratio, 1.0 - c.clip, 1.0 + c.clip);
    terms.policy += std::max(unclipped, clipped);
    d_log_prob[b] = unclipped >= clipped ? unclipped * inv_n : 0.0;
    terms.approx_kl += (ratio - 1.0) - log_ratio;
    terms.clip_fraction += std::abs(ratio - 1.0) > c.clip ? 1.0 : 0.0;
  }
  terms.policy *= inv_n;
  terms.approx_kl *= inv_n;
  terms.clip_fraction *= inv_n;
  terms.entropy = entropies.sum() * inv_n;
  const Eigen::RowVectorXd value_error = value_cache.outputs.row(0) - batch.returns.transpose();
  terms.value = 0.5 * value_error.squaredNorm() * inv_n;
  terms.total = terms.policy - c.entropy * terms.entropy + c.value * terms.value;
  if (!gradient) return terms;

  // d total / d policy outputs (and / d log_std).
  Eigen::MatrixXd d_out(out.rows(), n);
  Eigen::VectorXd d_log_std;
  if (discrete_) {
    for (Eigen::Index b = 0; b < n; ++b) {
      const Eigen::ArrayXd log_p = log_softmax.col(b).array();
      const Eigen::ArrayXd p = log_p.exp();
      Eigen::ArrayXd d = -d_log_prob[b] * p;  // d log p_a / d logits = onehot(a) - p
      d[static_cast<Eigen::Index>(batch.actions(0, b))] += d_log_prob[b];
      // -entropy coefficient * mean entropy; d entropy / d logits = -p (log p + H)
      d += c.entropy * inv_n * p * (log_p + entropies[b]);
      d_out.col(b) = d.matrix();
    }
  } else {
    const Eigen::ArrayXd inv_std = (-log_std_.array()).exp();
    // d log_prob / d mean = z / std; d log_prob / d log_std = z^2 - 1; d entropy / d log_std = 1
    d_out = (z.array().colwise() * inv_std).matrix() * d_log_prob.asDiagonal();
    d_log_std = (z.array().square() - 1.0).matrix() * d_log_prob;
    d_log_std.array() -= c.entropy * share;
  }
  const Eigen::MatrixXd d_value = (c.value * inv_n) * value_error;
  gradient->resize(parameter_count());
  *gradient << policy_.backward(policy_cache, d_out), d_log_std,
      value_.backward(value_cache, d_value);
  return terms;
}

}  // namespace fiber::ppo
