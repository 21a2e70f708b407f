#include "envs/pendulum.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "envs/uniform.hpp"

namespace fiber::rl {

namespace {
constexpr double kPi = std::numbers::pi;
}  // namespace

Pendulum::Pendulum() : action_space_(ActionSpace::box({-kMaxTorque}, {kMaxTorque})) {}

double Pendulum::angle_normalize(double x) {
  // Python's float %: fmod, then moved into the divisor's sign.
  const double divisor = 2 * kPi;
  double mod = std::fmod(x + kPi, divisor);
  if (mod != 0.0) {
    if (mod < 0.0) mod += divisor;
  } else {
    mod = 0.0;
  }
  return mod - kPi;
}

Eigen::VectorXd Pendulum::set_state(const Eigen::Vector2d& state) {
  state_ = state;
  start_episode();
  return observation();
}

Eigen::VectorXd Pendulum::observation() const {
  Eigen::VectorXd obs(3);
  obs << std::cos(state_(0)), std::sin(state_(0)), state_(1);
  return obs;
}

Eigen::VectorXd Pendulum::do_reset(std::uint64_t seed) {
  UniformRng rng(seed);
  state_(0) = rng.uniform(-kPi, kPi);
  state_(1) = rng.uniform(-1.0, 1.0);
  return observation();
}

StepResult Pendulum::do_step(const Eigen::VectorXd& action) {
  const double th = state_(0);
  const double thdot = state_(1);
  const double u = std::clamp(action(0), -kMaxTorque, kMaxTorque);
  const double normalized = angle_normalize(th);
  const double costs = normalized * normalized + 0.1 * thdot * thdot + 0.001 * (u * u);

  double newthdot =
      thdot +
      (3 * kGravity / (2 * kLength) * std::sin(th) + 3.0 / (kMass * kLength * kLength) * u) * kDt;
  newthdot = std::clamp(newthdot, -kMaxSpeed, kMaxSpeed);
  const double newth = th + newthdot * kDt;
  state_ << newth, newthdot;

  StepResult result;
  result.reward = -costs;
  result.terminated = false;
  result.observation = observation();
  return result;
}

}  // namespace fiber::rl
