// Adam over a flat parameter vector, as OpenAI-ES's optimizers.Adam (Kingma & Ba, 2015).
//
// SIGN CONVENTION: the gradient passed in is the gradient of a quantity to MINIMIZE, and the step
// is added to the parameters:
//   t      <- t + 1
//   a      =  stepsize * sqrt(1 - beta2^t) / (1 - beta1^t)
//   m      <- beta1 * m + (1 - beta1) * g
//   v      <- beta2 * v + (1 - beta2) * g * g
//   step   =  -a * m / (sqrt(v) + epsilon)
//   theta  <- theta + step
// For ES, which estimates the gradient g of the expected return (to MAXIMIZE), pass
//   adam.update(theta, -g + l2coeff * theta)
// as OpenAI-ES's master does (`optimizer.update(-g + config.l2coeff * theta)`).
//
// Checkpoints: the state (m, v, t) is exposed as plain vectors (State) and restored exactly, so a
// resumed run continues bit-identically; serialize() also covers the hyperparameters.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "policy/eigen_serialization.hpp"

namespace fiber::rl {

class Adam {
 public:
  struct State {
    std::vector<double> m;
    std::vector<double> v;
    std::uint64_t t = 0;  // steps taken so far
  };

  // Dimension 0; for deserialization.
  Adam() = default;
  // m = v = 0 and t = 0 over `dim` parameters. Throws std::invalid_argument for dim < 0,
  // stepsize < 0, betas outside [0, 1) or epsilon < 0.
  Adam(Eigen::Index dim, double stepsize, double beta1 = 0.9, double beta2 = 0.999,
       double epsilon = 1e-8);

  // Advances the state with `gradient` (of what to minimize; size dim(), checked) and returns the
  // step to ADD to the parameters.
  Eigen::VectorXd compute_step(const Eigen::VectorXd& gradient);
  // theta += compute_step(gradient); returns |step| / |theta before the step| (OpenAI-ES's
  // "update ratio"; 0 when theta was zero). theta's size is checked.
  double update(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient);

  Eigen::Index dim() const { return m_.size(); }
  double stepsize() const { return stepsize_; }
  void set_stepsize(double stepsize);  // e.g. for a schedule
  double beta1() const { return beta1_; }
  double beta2() const { return beta2_; }
  double epsilon() const { return epsilon_; }
  const Eigen::VectorXd& m() const { return m_; }
  const Eigen::VectorXd& v() const { return v_; }
  std::uint64_t t() const { return t_; }

  State state() const;
  // Restores m, v and t exactly; m and v must both have dim() values (std::invalid_argument).
  void set_state(const State& state);

  template <class Archive>
  void serialize(Archive& archive, const unsigned int /*version*/) {
    archive& stepsize_;
    archive& beta1_;
    archive& beta2_;
    archive& epsilon_;
    archive& m_;
    archive& v_;
    archive& t_;
  }

 private:
  double stepsize_ = 0.0;
  double beta1_ = 0.9;
  double beta2_ = 0.999;
  double epsilon_ = 1e-8;
  Eigen::VectorXd m_;
  Eigen::VectorXd v_;
  std::uint64_t t_ = 0;
};

}  // namespace fiber::rl
