// MountainCarContinuous-v0 (Gymnasium's classic_control/continuous_mountain_car.py): drive an
// underpowered car up the right hill. The force is the action clipped to [-1, 1], times a power of
// 0.0015; velocity += force * 0.0015 - 0.0025 cos(3 position), clipped to [-0.07, 0.07]; position
// += velocity, clipped to [-1.2, 0.6] (an inelastic wall on the left: velocity set to 0 there).
// Terminates when position >= 0.45 and velocity >= 0; truncated at 999 steps. Reward
// -0.1 action^2, plus 100 on the terminating step. As in Gymnasium, the penalty uses the action as
// given, not clipped (an action of 2 moves the car as 1 does and costs 0.4).
// Observation [position, velocity]; initial position uniform(-0.6, -0.4), velocity 0.
#pragma once

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::rl {

class MountainCarContinuous final : public Environment {
 public:
  static constexpr const char* kName = "MountainCarContinuous-v0";

  static constexpr double kMinAction = -1.0;
  static constexpr double kMaxAction = 1.0;
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;
  static constexpr double kGoalPosition = 0.45;
  static constexpr double kGoalVelocity = 0.0;
  static constexpr double kPower = 0.0015;

  MountainCarContinuous();

  std::string name() const override { return kName; }
  int observation_size() const override { return 2; }
  const ActionSpace& action_space() const override { return action_space_; }
  int max_episode_steps() const override { return 999; }

  // Starts an episode from [position, velocity]; returns the observation.
  Eigen::VectorXd set_state(const Eigen::Vector2d& state);
  const Eigen::Vector2d& state() const { return state_; }

 protected:
  Eigen::VectorXd do_reset(std::uint64_t seed) override;
  StepResult do_step(const Eigen::VectorXd& action) override;

 private:
  ActionSpace action_space_;
  Eigen::Vector2d state_ = Eigen::Vector2d::Zero();
};

}  // namespace fiber::rl
