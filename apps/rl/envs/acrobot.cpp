#include "envs/acrobot.hpp"

#include <algorithm>
#include <cmath>

#include "envs/uniform.hpp"

namespace fiber::rl {

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kAvailableTorque[3] = {-1.0, 0.0, 1.0};

// The state with the torque appended, as Gymnasium's s_augmented.
using Augmented = Eigen::Matrix<double, 5, 1>;

// Gymnasium's AcrobotEnv._dsdt with book_or_nips == "book".
Augmented dsdt(const Augmented& s) {
  constexpr double m1 = Acrobot::kLinkMass1;
  constexpr double m2 = Acrobot::kLinkMass2;
  constexpr double l1 = Acrobot::kLinkLength1;
  constexpr double lc1 = Acrobot::kLinkComPos1;
  constexpr double lc2 = Acrobot::kLinkComPos2;
  constexpr double I1 = Acrobot::kLinkMoi;
  constexpr double I2 = Acrobot::kLinkMoi;
  constexpr double g = Acrobot::kGravity;
  const double a = s(4);
  const double theta1 = s(0);
  const double theta2 = s(1);
  const double dtheta1 = s(2);
  const double dtheta2 = s(3);
  const double d1 =
      m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
  const double d2 = m2 * (lc2 * lc2 + l1 * lc2 * std::cos(theta2)) + I2;
  const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - kPi / 2.0);
  const double phi1 = -m2 * l1 * lc2 * dtheta2 * dtheta2 * std::sin(theta2) -
                      2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                      (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - kPi / 2) + phi2;
  const double ddtheta2 =
      (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1 * dtheta1 * std::sin(theta2) - phi2) /
      (m2 * lc2 * lc2 + I2 - d2 * d2 / d1);
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  Augmented derivative;
  derivative << dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0;
  return derivative;
}

// Gymnasium's rk4(derivs, y0, [0, dt]): one classic Runge-Kutta step.
Augmented rk4(const Augmented& y0, double dt) {
  const double dt2 = dt / 2.0;
  const Augmented k1 = dsdt(y0);
  const Augmented k2 = dsdt(y0 + dt2 * k1);
  const Augmented k3 = dsdt(y0 + dt2 * k2);
  const Augmented k4 = dsdt(y0 + dt * k3);
  return y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4);
}

double wrap(double x, double m, double M) {
  const double diff = M - m;
  while (x > M) x = x - diff;
  while (x < m) x = x + diff;
  return x;
}

double bound(double x, double m, double M) { return std::min(std::max(x, m), M); }

}  // namespace

Acrobot::Acrobot() : action_space_(ActionSpace::discrete_actions(3)) {}

Eigen::VectorXd Acrobot::set_state(const Eigen::Vector4d& state) {
  state_ = state;
  start_episode();
  return observation();
}

Eigen::VectorXd Acrobot::observation() const {
  Eigen::VectorXd obs(6);
  obs << std::cos(state_(0)), std::sin(state_(0)), std::cos(state_(1)), std::sin(state_(1)),
      state_(2), state_(3);
  return obs;
}

Eigen::VectorXd Acrobot::do_reset(std::uint64_t seed) {
  UniformRng rng(seed);
  for (int i = 0; i < 4; ++i) state_(i) = static_cast<float>(rng.uniform(-0.1, 0.1));
  return observation();
}

StepResult Acrobot::do_step(const Eigen::VectorXd& action) {
  const double torque = kAvailableTorque[static_cast<int>(action(0))];
  Augmented augmented;
  augmented << state_, torque;
  const Augmented ns = rk4(augmented, kDt);
  state_(0) = wrap(ns(0), -kPi, kPi);
  state_(1) = wrap(ns(1), -kPi, kPi);
  state_(2) = bound(ns(2), -kMaxVel1, kMaxVel1);
  state_(3) = bound(ns(3), -kMaxVel2, kMaxVel2);

  StepResult result;
  result.terminated = -std::cos(state_(0)) - std::cos(state_(1) + state_(0)) > 1.0;
  result.reward = result.terminated ? 0.0 : -1.0;
  result.observation = observation();
  return result;
}

}  // namespace fiber::rl
