#include "envs/cartpole.hpp"

#include <cmath>

#include "envs/uniform.hpp"

namespace fiber::rl {

CartPole::CartPole() : action_space_(ActionSpace::discrete_actions(2)) {}

Eigen::VectorXd CartPole::set_state(const Eigen::Vector4d& state) {
  state_ = state;
  terminated_before_ = false;
  start_episode();
  return state_;
}

Eigen::VectorXd CartPole::do_reset(std::uint64_t seed) {
  UniformRng rng(seed);
  for (int i = 0; i < 4; ++i) state_(i) = rng.uniform(-0.05, 0.05);
  terminated_before_ = false;
  return state_;
}

StepResult CartPole::do_step(const Eigen::VectorXd& action) {
  double x = state_(0);
  double x_dot = state_(1);
  double theta = state_(2);
  double theta_dot = state_(3);
  const double force = action(0) == 1.0 ? kForceMag : -kForceMag;
  const double costheta = std::cos(theta);
  const double sintheta = std::sin(theta);

  const double temp = (force + kPoleMassLength * theta_dot * theta_dot * sintheta) / kTotalMass;
  const double thetaacc = (kGravity * sintheta - costheta * temp) /
                          (kLength * (4.0 / 3.0 - kMassPole * costheta * costheta / kTotalMass));
  const double xacc = temp - kPoleMassLength * thetaacc * costheta / kTotalMass;

  // kinematics_integrator == "euler"
  x = x + kTau * x_dot;
  x_dot = x_dot + kTau * xacc;
  theta = theta + kTau * theta_dot;
  theta_dot = theta_dot + kTau * thetaacc;
  state_ << x, x_dot, theta, theta_dot;

  StepResult result;
  result.terminated = x < -kXThreshold || x > kXThreshold || theta < -kThetaThresholdRadians ||
                      theta > kThetaThresholdRadians;
  if (!result.terminated) {
    result.reward = 1.0;
  } else if (!terminated_before_) {
    terminated_before_ = true;  // the pole just fell
    result.reward = 1.0;
  } else {
    result.reward = 0.0;  // stepping past termination
  }
  result.observation = state_;
  return result;
}

}  // namespace fiber::rl
