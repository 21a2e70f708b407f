// The update phase of PPO, on the master: epochs of shuffled minibatches over an iteration's
// samples, advantage normalization per minibatch, global gradient-norm clipping, Adam.
#pragma once

#include <cstdint>
#include <random>

#include <Eigen/Core>

#include "actor_critic.hpp"
#include "policy/adam.hpp"

namespace fiber::ppo {

struct UpdateSettings {
  LossCoefficients coefficients;
  int epochs = 4;
  int minibatches = 4;
  double max_gradient_norm = 0.5;  // <= 0: no clipping
  bool normalize_advantages = true;
};

// An iteration's samples, one per column (entry), all environments' segments side by side.
struct Samples {
  Eigen::MatrixXd observations;
  Eigen::MatrixXd actions;
  Eigen::VectorXd log_probs;
  Eigen::VectorXd advantages;
  Eigen::VectorXd returns;
  Eigen::VectorXd values;  // for the explained variance
};

// Means over the minibatches of the last epoch (as CleanRL logs them), and the explained
// variance of the value predictions made during the rollout.
struct UpdateReport {
  LossTerms loss;
  double explained_variance = 0;
};

// Runs the update: model and adam change; rng draws the minibatch permutations (std::shuffle);
// the caller sets adam's stepsize (learning-rate annealing).
UpdateReport ppo_update(ActorCritic& model, rl::Adam& adam, const Samples& samples,
                        const UpdateSettings& settings, std::mt19937_64& rng);

// Scales `gradient` so that its Euclidean norm is at most max_norm (torch's clip_grad_norm_);
// returns the norm before clipping.
double clip_gradient_norm(Eigen::VectorXd& gradient, double max_norm);

}  // namespace fiber::ppo
