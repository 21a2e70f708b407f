// The MuJoCo humanoids: walk forward without falling. Two of them, made by name:
//
// Humanoid-v5: Gymnasium 1.x's Humanoid-v5 (gymnasium/envs/mujoco/humanoid_v5.py) on its own
// model, built into the library from models/humanoid_v5.xml (Gymnasium's humanoid.xml, MIT
// licence): 17 motors with controls in [-0.4, 0.4], timestep 0.003, frame skip 5 (dt 0.015).
//   reward = 1.25 * x velocity of the center of mass + 5.0 if healthy
//            - 0.1 * sum(action^2) - min(5e-7 * sum(cfrc_ext^2), 10)
// The action goes to the controls as given (MuJoCo clamps it to the control range in the
// dynamics, as in Gymnasium), so the control cost is charged on the action as given.
// Observation (348): qpos[2:], qvel, cinert, cvel (bodies other than the world), qfrc_actuator
// (degrees of freedom other than the free root joint), cfrc_ext (bodies other than the world).
// As in Gymnasium, the reset observation's cfrc_ext part is zero (mj_forward does not compute it).
//
// Humanoid-MuJoCoModel: the humanoid that ships with MuJoCo (Debian package libmujoco-samples:
// /usr/share/mujoco/model/humanoid/humanoid.xml, or $FIBER_HUMANOID_XML; 21 motors with controls
// in [-1, 1], timestep 0.005, frame skip 5: dt 0.025; 426 observations, as above). Its reward:
//   1.25 * x velocity of the center of mass + 5.0 if healthy - 0.1 * sum(clip(action)^2)
// (no contact cost; the control cost on the action clipped to the control range). Its reset
// observation includes the contact forces (mj_rnePostConstraint).
//
// Both: healthy while the torso height qpos[2] is strictly inside (1.0, 2.0); the episode
// terminates as soon as it is not, and is truncated at 1000 steps. Initial state: the model's
// qpos0 and zero velocity, plus uniform(-0.01, 0.01) noise on every entry of qpos and qvel. Each
// process loads a model once and shares it between its environments (each has its own mjData).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::rl {

class Humanoid final : public Environment {
 public:
  enum class Model { gymnasium_v5, mujoco };

  static constexpr const char* kV5Name = "Humanoid-v5";
  static constexpr const char* kMujocoModelName = "Humanoid-MuJoCoModel";
  static constexpr const char* kMujocoXml = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  // Overrides kMujocoXml for Humanoid-MuJoCoModel (not for Humanoid-v5).
  static constexpr const char* kXmlVariable = "FIBER_HUMANOID_XML";

  static constexpr int kFrameSkip = 5;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr double kForwardRewardWeight = 1.25;
  static constexpr double kHealthyReward = 5.0;
  static constexpr double kCtrlCostWeight = 0.1;
  static constexpr double kContactCostWeight = 5e-7;  // Humanoid-v5 only
  static constexpr double kContactCostMax = 10.0;     // Humanoid-v5 only
  static constexpr double kHealthyZMin = 1.0;
  static constexpr double kHealthyZMax = 2.0;
  static constexpr double kResetNoiseScale = 1e-2;

  struct Options {
    Model model = Model::gymnasium_v5;
    // The model file; empty: Humanoid-v5's built-in model, or for the MuJoCo model
    // $FIBER_HUMANOID_XML if set and not empty, else kMujocoXml.
    std::string xml_path;
    // Gymnasium's observation with cinert, cvel, qfrc_actuator and cfrc_ext; false: qpos[2:]
    // and qvel only.
    bool full_observation = true;
  };

  // The terms of the last step's reward (Gymnasium's info).
  struct RewardTerms {
    double forward = 0.0;       // 1.25 * x_velocity
    double healthy = 0.0;       // 5.0 or 0.0
    double ctrl_cost = 0.0;     // subtracted
    double contact_cost = 0.0;  // subtracted; always 0 for the MuJoCo model
    double x_velocity = 0.0;
  };

  // Throws std::runtime_error (one line: the path, and what to install) when the model file is
  // missing or does not load.
  Humanoid();
  explicit Humanoid(const Options& options);
  ~Humanoid() override;

  std::string name() const override;
  int observation_size() const override;
  const ActionSpace& action_space() const override;
  int max_episode_steps() const override { return kMaxEpisodeSteps; }

  // The model file; empty for Humanoid-v5's built-in model.
  const std::string& xml_path() const;
  double torso_height() const;  // qpos[2]
  double x_position() const;    // qpos[0]
  const RewardTerms& last_reward_terms() const;
  double dt() const;  // seconds per step: the model's timestep * kFrameSkip

  // Everything the next steps depend on, so that another environment object of the same model
  // continues the episode bit for bit: time, qpos, qvel, act, qacc_warmstart (the constraint
  // solver's warm start), the center of mass's x (the next step's velocity starts from it) and
  // the current observation (after a step, MuJoCo's derived quantities are those of the
  // integrator's last stage, not a function of qpos and qvel). state_size() values.
  std::vector<double> state() const;
  int state_size() const;
  // Puts the environment in a state() of the same model and returns its observation there; the
  // step counter restarts at 0. std::invalid_argument for a state of another size.
  Eigen::VectorXd set_state(const std::vector<double>& state);

 protected:
  Eigen::VectorXd do_reset(std::uint64_t seed) override;
  StepResult do_step(const Eigen::VectorXd& action) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fiber::rl
