#include "envs/mountain_car_continuous.hpp"

#include <algorithm>
#include <cmath>

#include "envs/uniform.hpp"

namespace fiber::rl {

MountainCarContinuous::MountainCarContinuous()
    : action_space_(ActionSpace::box({kMinAction}, {kMaxAction})) {}

Eigen::VectorXd MountainCarContinuous::set_state(const Eigen::Vector2d& state) {
  state_ = state;
  start_episode();
  return state_;
}

Eigen::VectorXd MountainCarContinuous::do_reset(std::uint64_t seed) {
  UniformRng rng(seed);
  state_ << rng.uniform(-0.6, -0.4), 0.0;
  return state_;
}

StepResult MountainCarContinuous::do_step(const Eigen::VectorXd& action) {
  double position = state_(0);
  double velocity = state_(1);
  const double force = std::min(std::max(action(0), kMinAction), kMaxAction);

  velocity += force * kPower - 0.0025 * std::cos(3 * position);
  if (velocity > kMaxSpeed) velocity = kMaxSpeed;
  if (velocity < -kMaxSpeed) velocity = -kMaxSpeed;
  position += velocity;
  if (position > kMaxPosition) position = kMaxPosition;
  if (position < kMinPosition) position = kMinPosition;
  if (position == kMinPosition && velocity < 0) velocity = 0;

  StepResult result;
  result.terminated = position >= kGoalPosition && velocity >= kGoalVelocity;
  result.reward = result.terminated ? 100.0 : 0.0;
  result.reward -= std::pow(action(0), 2) * 0.1;
  state_ << position, velocity;
  result.observation = state_;
  return result;
}

}  // namespace fiber::rl
