// Policy heads: from the network's output to an action.
//
// Discrete action spaces: the network outputs one logit per action. DiscretePolicy picks the
// argmax (deterministic, used by ES) or samples from softmax(logits) (PPO), and gives log
// probabilities, entropy and their gradients with respect to the logits for backpropagation.
//
// Continuous action spaces: the network outputs the action mean directly (linear output layer, no
// tanh). ContinuousPolicy clips it to the action bounds (deterministic, used by ES) or samples a
// Gaussian around it with a state-independent log standard deviation vector (PPO).
//
// act() is the one-call version for ES: observation -> network -> deterministic action.
#pragma once

#include <cmath>
#include <random>

#include <Eigen/Core>

#include "policy/mlp.hpp"

namespace fiber::rl {

// kContinuous clips the network's output to the bounds; kSquashed maps it into them with tanh
// (low + (tanh(out) + 1) / 2 * (high - low)), which makes saturated, bang-bang actions as easy to
// reach as small ones: what deterministic policies searched by ES need on Pendulum-like tasks.
enum class ActionKind { kDiscrete, kContinuous, kSquashed };

// Bounds of a continuous action space (per dimension); unused for discrete actions.
struct ActionBounds {
  Eigen::VectorXd low;
  Eigen::VectorXd high;
};

// Elementwise clip of `action` to [bounds.low, bounds.high]; sizes must match and low <= high
// (std::invalid_argument otherwise).
Eigen::VectorXd clip_action(const Eigen::VectorXd& action, const ActionBounds& bounds);

struct DiscretePolicy {
  // Index of the largest logit; the first one on ties, NaNs ignored (like numpy.argmax without
  // NaNs). Throws std::invalid_argument for an empty vector.
  static Eigen::Index deterministic(const Eigen::VectorXd& logits);
  // softmax(logits) and log softmax(logits), computed stably (max subtracted).
  static Eigen::VectorXd probabilities(const Eigen::VectorXd& logits);
  static Eigen::VectorXd log_probabilities(const Eigen::VectorXd& logits);
  // log softmax(logits)[action]; std::out_of_range for an action outside [0, size).
  static double log_prob(const Eigen::VectorXd& logits, Eigen::Index action);
  // d log_prob(logits, action) / d logits = onehot(action) - softmax(logits).
  static Eigen::VectorXd log_prob_gradient(const Eigen::VectorXd& logits, Eigen::Index action);
  // -sum p log p.
  static double entropy(const Eigen::VectorXd& logits);
  // d entropy / d logits = -p * (log p + entropy).
  static Eigen::VectorXd entropy_gradient(const Eigen::VectorXd& logits);

  // Draws an action from softmax(logits): one uniform draw in [0, 1) from `rng` (any standard
  // uniform random bit generator, e.g. std::mt19937_64), inverse CDF.
  template <class Urbg>
  static Eigen::Index sample(const Eigen::VectorXd& logits, Urbg& rng) {
    const Eigen::VectorXd p = probabilities(logits);
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    double cumulative = 0.0;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
      cumulative += p[i];
      if (u < cumulative) return i;
    }
    // Rounding left the total a hair below u: the last action with non-zero probability.
    for (Eigen::Index i = p.size(); i-- > 0;) {
      if (p[i] > 0.0) return i;
    }
    return p.size() - 1;
  }
};

class ContinuousPolicy {
 public:
  // Bounds for deterministic() and clip(); log_std for the Gaussian (same size; default zeros,
  // i.e. standard deviation 1). Throws std::invalid_argument on size mismatch or low > high.
  explicit ContinuousPolicy(ActionBounds bounds);
  ContinuousPolicy(ActionBounds bounds, const Eigen::VectorXd& log_std);

  Eigen::Index action_size() const { return bounds_.low.size(); }
  const ActionBounds& bounds() const { return bounds_; }
  const Eigen::VectorXd& log_std() const { return log_std_; }
  void set_log_std(const Eigen::VectorXd& log_std);  // size-checked

  // clip(mean, low, high): the ES action.
  Eigen::VectorXd deterministic(const Eigen::VectorXd& mean) const;
  // The same clip, for a sampled action before it goes to the environment.
  Eigen::VectorXd clip(const Eigen::VectorXd& action) const;

  // mean + exp(log_std) * N(0, I), NOT clipped (log_prob is of the unclipped draw; clip() it for
  // the environment). One std::normal_distribution draw per dimension, in order.
  template <class Urbg>
  Eigen::VectorXd sample(const Eigen::VectorXd& mean, Urbg& rng) const {
    check_size(mean);
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::VectorXd action(mean.size());
    for (Eigen::Index i = 0; i < mean.size(); ++i) {
      action[i] = mean[i] + std::exp(log_std_[i]) * normal(rng);
    }
    return action;
  }

  // log N(action; mean, diag(exp(2 log_std))).
  double log_prob(const Eigen::VectorXd& mean, const Eigen::VectorXd& action) const;
  // d log_prob / d mean = (action - mean) / std^2.
  Eigen::VectorXd log_prob_gradient_mean(const Eigen::VectorXd& mean,
                                         const Eigen::VectorXd& action) const;
  // d log_prob / d log_std = (action - mean)^2 / std^2 - 1.
  Eigen::VectorXd log_prob_gradient_log_std(const Eigen::VectorXd& mean,
                                            const Eigen::VectorXd& action) const;
  // Entropy of the Gaussian: sum(log_std) + size * (0.5 + 0.5 log(2 pi)); its gradient with
  // respect to log_std is a vector of ones.
  double entropy() const;

 private:
  void check_size(const Eigen::VectorXd& v) const;

  ActionBounds bounds_;
  Eigen::VectorXd log_std_;
};

// The deterministic action of `mlp` for `observation` (already normalized, if the caller
// normalizes): for kDiscrete a vector of one element holding the argmax index (as a double),
// `bounds` unused; for kContinuous clip(output, bounds.low, bounds.high); for kSquashed the
// tanh-squashed output.
Eigen::VectorXd act(const Mlp& mlp, const Eigen::VectorXd& observation, ActionKind kind,
                    const ActionBounds& bounds = {});

// The same, typed: the argmax index / the clipped output.
Eigen::Index act_discrete(const Mlp& mlp, const Eigen::VectorXd& observation);
Eigen::VectorXd act_continuous(const Mlp& mlp, const Eigen::VectorXd& observation,
                               const ActionBounds& bounds);
Eigen::VectorXd act_squashed(const Mlp& mlp, const Eigen::VectorXd& observation,
                             const ActionBounds& bounds);

}  // namespace fiber::rl
