// Pendulum-v1 (Gymnasium's classic_control/pendulum.py): swing a pendulum up with a torque in
// [-2, 2] (clipped). g = 10, m = l = 1, dt = 0.05, angular velocity clipped to [-8, 8]. Reward
// -(angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2) with the clipped torque u, computed
// from the state before the step. Never terminates; truncated at 200 steps.
// Observation [cos theta, sin theta, theta_dot]; initial theta uniform(-pi, pi), theta_dot
// uniform(-1, 1).
#pragma once

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::rl {

class Pendulum final : public Environment {
 public:
  static constexpr const char* kName = "Pendulum-v1";

  static constexpr double kMaxSpeed = 8.0;
  static constexpr double kMaxTorque = 2.0;
  static constexpr double kDt = 0.05;
  static constexpr double kGravity = 10.0;
  static constexpr double kMass = 1.0;
  static constexpr double kLength = 1.0;

  Pendulum();

  std::string name() const override { return kName; }
  int observation_size() const override { return 3; }
  const ActionSpace& action_space() const override { return action_space_; }
  int max_episode_steps() const override { return 200; }

  // Starts an episode from [theta, theta_dot]; returns the observation.
  Eigen::VectorXd set_state(const Eigen::Vector2d& state);
  const Eigen::Vector2d& state() const { return state_; }

  // ((x + pi) mod 2 pi) - pi with Python's modulo (the result takes the divisor's sign).
  static double angle_normalize(double x);

 protected:
  Eigen::VectorXd do_reset(std::uint64_t seed) override;
  StepResult do_step(const Eigen::VectorXd& action) override;

 private:
  Eigen::VectorXd observation() const;

  ActionSpace action_space_;
  Eigen::Vector2d state_ = Eigen::Vector2d::Zero();
};

}  // namespace fiber::rl
