// CartPole-v1 (Gymnasium's classic_control/cartpole.py): a pole on a cart, pushed left (action 0)
// or right (action 1) with a force of 10 N. Euler integration with tau = 0.02 s; the episode
// terminates when |x| > 2.4 or |theta| > 12 degrees, and is truncated at 500 steps. Reward 1 for
// every step, the terminating one included (0 for steps taken after termination, as Gymnasium).
// Observation [x, x_dot, theta, theta_dot]; initial state uniform(-0.05, 0.05) in each entry.
#pragma once

#include <numbers>

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::rl {

class CartPole final : public Environment {
 public:
  static constexpr const char* kName = "CartPole-v1";

  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassPole + kMassCart;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;
  static constexpr double kThetaThresholdRadians = 12 * 2 * std::numbers::pi / 360;
  static constexpr double kXThreshold = 2.4;

  CartPole();

  std::string name() const override { return kName; }
  int observation_size() const override { return 4; }
  const ActionSpace& action_space() const override { return action_space_; }
  int max_episode_steps() const override { return 500; }

  // Starts an episode from [x, x_dot, theta, theta_dot]; returns the observation.
  Eigen::VectorXd set_state(const Eigen::Vector4d& state);
  const Eigen::Vector4d& state() const { return state_; }

 protected:
  Eigen::VectorXd do_reset(std::uint64_t seed) override;
  StepResult do_step(const Eigen::VectorXd& action) override;

 private:
  ActionSpace action_space_;
  Eigen::Vector4d state_ = Eigen::Vector4d::Zero();
  bool terminated_before_ = false;  // Gymnasium's steps_beyond_terminated is not None
};

}  // namespace fiber::rl
