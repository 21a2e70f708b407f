// Acrobot-v1 (Gymnasium's classic_control/acrobot.py): two links hanging from a pivot, torque -1,
// 0 or +1 (actions 0, 1, 2) on the joint between them. Sutton and Barto's "book" dynamics,
// integrated with one fourth-order Runge-Kutta step of dt = 0.2 s; no torque noise. Angles are
// wrapped to [-pi, pi], velocities bounded to 4 pi and 9 pi. The episode terminates when the free
// end is above the target height, -cos(theta1) - cos(theta2 + theta1) > 1, and is truncated at 500
// steps. Reward -1 per step, 0 on the terminating step.
// Observation [cos theta1, sin theta1, cos theta2, sin theta2, dtheta1, dtheta2]; initial state
// uniform(-0.1, 0.1) in each of theta1, theta2, dtheta1, dtheta2 (rounded to float, as Gymnasium).
#pragma once

#include <numbers>

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::rl {

class Acrobot final : public Environment {
 public:
  static constexpr const char* kName = "Acrobot-v1";

  static constexpr double kDt = 0.2;
  static constexpr double kLinkLength1 = 1.0;
  static constexpr double kLinkMass1 = 1.0;
  static constexpr double kLinkMass2 = 1.0;
  static constexpr double kLinkComPos1 = 0.5;
  static constexpr double kLinkComPos2 = 0.5;
  static constexpr double kLinkMoi = 1.0;
  static constexpr double kGravity = 9.8;
  static constexpr double kMaxVel1 = 4 * std::numbers::pi;
  static constexpr double kMaxVel2 = 9 * std::numbers::pi;

  Acrobot();

  std::string name() const override { return kName; }
  int observation_size() const override { return 6; }
  const ActionSpace& action_space() const override { return action_space_; }
  int max_episode_steps() const override { return 500; }

  // Starts an episode from [theta1, theta2, dtheta1, dtheta2]; returns the observation.
  Eigen::VectorXd set_state(const Eigen::Vector4d& state);
  const Eigen::Vector4d& state() const { return state_; }

 protected:
  Eigen::VectorXd do_reset(std::uint64_t seed) override;
  StepResult do_step(const Eigen::VectorXd& action) override;

 private:
  Eigen::VectorXd observation() const;

  ActionSpace action_space_;
  Eigen::Vector4d state_ = Eigen::Vector4d::Zero();
};

}  // namespace fiber::rl
