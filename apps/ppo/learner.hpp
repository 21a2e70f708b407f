// The update phase of PPO: epochs of shuffled minibatches over an iteration's samples, advantage
// normalization per minibatch, global gradient-norm clipping, Adam. Each minibatch's gradient is
// computed in parts (gradient_parts: a function of the minibatch's size alone) summed in their
// order, on one thread or several: the results do not depend on the threads
// (docs/design.md "The PPO update on a wide learner").
#pragma once

#include <cstdint>
#include <random>

#include <Eigen/Core>

#include "actor_critic.hpp"
#include "policy/adam.hpp"
#include "policy/eigen_serialization.hpp"

namespace fiber::ppo {

struct UpdateSettings {
  LossCoefficients coefficients;
  int epochs = 4;
  int minibatches = 4;
  double max_gradient_norm = 0.5;  // <= 0: no clipping
  bool normalize_advantages = true;
  int threads = 1;  // that compute a minibatch's parts; the results are the same for any

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& coefficients& epochs& minibatches& max_gradient_norm& normalize_advantages& threads;
  }
};

// An iteration's samples, one per column (entry), all environments' segments side by side.
struct Samples {
  Eigen::MatrixXd observations;
  Eigen::MatrixXd actions;
  Eigen::VectorXd log_probs;
  Eigen::VectorXd advantages;
  Eigen::VectorXd returns;
  Eigen::VectorXd values;  // for the explained variance

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& observations& actions& log_probs& advantages& returns& values;
  }
};

// Means over the minibatches of the last epoch (as CleanRL logs them), and the explained
// variance of the value predictions made during the rollout.
struct UpdateReport {
  LossTerms loss;
  double explained_variance = 0;
  int threads = 0;  // distinct threads that computed parts of the gradients

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& loss& explained_variance& threads;
  }
};

// Samples of a part: fewer make its matrix products inefficient (the shapes' GEMMs).
constexpr Eigen::Index kSamplesPerPart = 32;
// Parts of a minibatch at most: as many threads as that can share its gradient.
constexpr int kMaxGradientParts = 64;

// The parts a minibatch of `minibatch_size` samples is cut into: minibatch_size /
// kSamplesPerPart, at least 1, at most kMaxGradientParts. Part p holds the minibatch's samples
// [p * size / parts, (p + 1) * size / parts).
int gradient_parts(Eigen::Index minibatch_size);

// Runs the update: model and adam change; rng draws the minibatch permutations (std::shuffle);
// the caller sets adam's stepsize (learning-rate annealing). The parts run on
// min(settings.threads, parts) threads, the caller's among them.
UpdateReport ppo_update(ActorCritic& model, rl::Adam& adam, const Samples& samples,
                        const UpdateSettings& settings, std::mt19937_64& rng);

// Scales `gradient` so that its Euclidean norm is at most max_norm (torch's clip_grad_norm_);
// returns the norm before clipping.
double clip_gradient_norm(Eigen::VectorXd& gradient, double max_norm);

}  // namespace fiber::ppo
