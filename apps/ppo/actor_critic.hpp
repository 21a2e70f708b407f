// The actor-critic of fiber-ppo: two tanh MLPs (policy and value, no shared layers) and, for
// continuous actions, a state-independent log standard deviation; and the PPO loss with its
// gradient by analytic backpropagation.
//
// Flat parameter vector (parameters()): the policy MLP's parameters (Mlp's order), then log_std
// (continuous actions only, one per action dimension), then the value MLP's. One Adam and one
// gradient norm cover all of it, as CleanRL's single optimizer over agent.parameters().
//
// Policy heads: categorical over the policy's outputs (logits) for discrete actions; diagonal
// Gaussian with mean = the policy's outputs and std = exp(log_std) for continuous ones (the
// sampled action is stored unclipped; the environment clips it).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "policy/action.hpp"
#include "policy/eigen_serialization.hpp"
#include "policy/mlp.hpp"

namespace fiber::ppo {

// What the PPO loss weighs (CleanRL's names in brackets).
struct LossCoefficients {
  double clip = 0.2;      // ratio clipping [clip_coef]
  double value = 0.5;     // value loss weight [vf_coef]
  double entropy = 0.01;  // entropy bonus weight [ent_coef]

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& clip& value& entropy;
  }
};

// One minibatch, one sample per column (or entry).
struct Batch {
  Eigen::MatrixXd observations;  // observation size x B, as the policy saw them (normalized)
  Eigen::MatrixXd actions;       // discrete: 1 x B action indices; continuous: size x B, unclipped
  Eigen::VectorXd old_log_probs;
  Eigen::VectorXd advantages;  // already normalized, if the run normalizes them
  Eigen::VectorXd returns;     // value targets
};

// The loss's parts (means over the batch) and diagnostics.
struct LossTerms {
  double total = 0;          // policy - entropy coefficient * entropy + value coef * value
  double policy = 0;         // mean max(-A r, -A clip(r, 1 - c, 1 + c))
  double value = 0;          // mean 0.5 (V - return)^2
  double entropy = 0;        // mean entropy of the policy
  double approx_kl = 0;      // mean (r - 1) - log r (Schulman's k3 estimator)
  double clip_fraction = 0;  // fraction of samples with |r - 1| > clip

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& total& policy& value& entropy& approx_kl& clip_fraction;
  }
};

class ActorCritic {
 public:
  ActorCritic() = default;
  // hidden: hidden layer sizes of both networks. Discrete: `actions` logits; continuous:
  // `actions` dimensions with log_std = initial_log_std. Initialization (deterministic in seed):
  // normc, rows of norm 1 in hidden layers, 0.01 in the policy's output layer (near-uniform or
  // near-zero-mean start) and 1 in the value's.
  ActorCritic(long observation_size, const std::vector<long>& hidden, bool discrete, long actions,
              double initial_log_std, std::uint64_t seed);

  bool discrete() const { return discrete_; }
  Eigen::Index parameter_count() const;
  Eigen::VectorXd parameters() const;
  void set_parameters(const Eigen::VectorXd& parameters);  // size-checked
  const rl::Mlp& policy() const { return policy_; }
  const rl::Mlp& value() const { return value_; }
  const Eigen::VectorXd& log_std() const { return log_std_; }

  // One observation: a sampled action (discrete: one entry, the index), its log probability.
  template <class Urbg>
  Eigen::VectorXd sample(const Eigen::VectorXd& observation, Urbg& rng, double& log_prob) const {
    const Eigen::VectorXd out = policy_.forward(observation);
    if (discrete_) {
      const Eigen::Index a = rl::DiscretePolicy::sample(out, rng);
      log_prob = rl::DiscretePolicy::log_prob(out, a);
      return Eigen::VectorXd::Constant(1, static_cast<double>(a));
    }
    Eigen::VectorXd action(out.size());
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Eigen::Index i = 0; i < out.size(); ++i) {
      action[i] = out[i] + std::exp(log_std_[i]) * normal(rng);
    }
    log_prob = gaussian_log_prob(out, action);
    return action;
  }
  // The deterministic action (argmax, or the mean), for evaluation; not clipped.
  Eigen::VectorXd mode(const Eigen::VectorXd& observation) const;
  double value_of(const Eigen::VectorXd& observation) const;

  // The PPO loss on `batch`; with `gradient` not null, also its gradient with respect to
  // parameters() (same order and size).
  LossTerms loss(const Batch& batch, const LossCoefficients& coefficients,
                 Eigen::VectorXd* gradient) const;
  // The share of `part`, some of the samples of a minibatch of `minibatch_size`, in that
  // minibatch's loss: the terms and gradients of its parts add up to the minibatch's (a sum in
  // another order: equal up to rounding).
  LossTerms loss_share(const Batch& part, Eigen::Index minibatch_size,
                       const LossCoefficients& coefficients, Eigen::VectorXd* gradient) const;

  // Boost.Serialization: the head, both networks and log_std (a learner's task carries them).
  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& discrete_& policy_& value_& log_std_;
  }

 private:
  double gaussian_log_prob(const Eigen::VectorXd& mean, const Eigen::VectorXd& action) const;

  bool discrete_ = true;
  rl::Mlp policy_;
  rl::Mlp value_;
  Eigen::VectorXd log_std_;  // empty for discrete actions
};

}  // namespace fiber::ppo
