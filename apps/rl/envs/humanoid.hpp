// Humanoid: MuJoCo humanoid locomotion with Gymnasium's Humanoid reward, on the humanoid model
// that ships with MuJoCo (Debian package libmujoco-samples:
// /usr/share/mujoco/model/humanoid/humanoid.xml; 27 degrees of freedom, 21 motors). The model
// file can be overridden with the environment variable FIBER_HUMANOID_XML, or per environment with
// Humanoid::Options::xml_path. Each process loads a model file once and shares it between its
// environments (each has its own mjData).
//
// One step: the action clipped to the actuators' ctrlrange goes to the controls, then 5 MuJoCo
// steps (frame_skip 5). Reward (as Gymnasium's Humanoid-v5 without its contact cost):
//   1.25 * x velocity of the center of mass + 5.0 if healthy - 0.1 * sum(ctrl^2).
// Healthy while the torso height qpos[2] is strictly inside (1.0, 2.0); the episode terminates as
// soon as it is not, and is truncated at 1000 steps.
// Observation (as Gymnasium's Humanoid-v5): qpos[2:], qvel, cinert, cvel (bodies other than the
// world), qfrc_actuator (degrees of freedom other than the free root joint) and cfrc_ext (bodies
// other than the world): 26 + 27 + 160 + 96 + 21 + 96 = 426 entries for the MuJoCo model. With
// Options::full_observation false, only qpos[2:] and qvel (53 entries).
// Initial state: the model's qpos0 and zero velocity, plus uniform(-0.01, 0.01) noise on every
// entry of qpos and qvel.
#pragma once

#include <memory>
#include <string>

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::rl {

class Humanoid final : public Environment {
 public:
  static constexpr const char* kName = "Humanoid";
  static constexpr const char* kDefaultXml = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  static constexpr const char* kXmlVariable = "FIBER_HUMANOID_XML";

  static constexpr int kFrameSkip = 5;
  static constexpr double kForwardRewardWeight = 1.25;
  static constexpr double kHealthyReward = 5.0;
  static constexpr double kCtrlCostWeight = 0.1;
  static constexpr double kHealthyZMin = 1.0;
  static constexpr double kHealthyZMax = 2.0;
  static constexpr double kResetNoiseScale = 1e-2;

  struct Options {
    // The model file; empty: $FIBER_HUMANOID_XML if set and not empty, else kDefaultXml.
    std::string xml_path;
    // Gymnasium's observation with cinert, cvel, qfrc_actuator and cfrc_ext; false: qpos[2:]
    // and qvel only.
    bool full_observation = true;
  };

  // The terms of the last step's reward (Gymnasium's info).
  struct RewardTerms {
    double forward = 0.0;    // 1.25 * x_velocity
    double healthy = 0.0;    // 5.0 or 0.0
    double ctrl_cost = 0.0;  // 0.1 * sum(ctrl^2), subtracted
    double x_velocity = 0.0;
  };

  // Throws std::runtime_error (one line: the path, and to install libmujoco-samples) when the
  // model file is missing or does not load.
  Humanoid();
  explicit Humanoid(const Options& options);
  ~Humanoid() override;

  std::string name() const override { return kName; }
  int observation_size() const override;
  const ActionSpace& action_space() const override;
  int max_episode_steps() const override { return 1000; }

  const std::string& xml_path() const;
  double torso_height() const;  // qpos[2]
  double x_position() const;    // qpos[0]
  const RewardTerms& last_reward_terms() const;
  double dt() const;  // seconds per step: the model's timestep * kFrameSkip

 protected:
  Eigen::VectorXd do_reset(std::uint64_t seed) override;
  StepResult do_step(const Eigen::VectorXd& action) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fiber::rl
