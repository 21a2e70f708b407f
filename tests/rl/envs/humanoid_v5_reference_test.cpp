// Humanoid-v5 against Gymnasium's definition, stepped by hand.
//
// How the expected values are obtained: Python's gymnasium and mujoco packages are not installed
// on this machine, so this file re-implements, with MuJoCo's C API and independently of
// apps/rl/envs, what Gymnasium 1.x does (gymnasium/envs/mujoco/humanoid_v5.py and
// mujoco_env.py, commit 3f0476a8 of Farama-Foundation/Gymnasium), on the same model file
// (apps/rl/envs/models/humanoid_v5.xml, loaded here from the source tree, not from the copy
// built into the library):
//   reset:  mj_resetData; qpos = init_qpos + U(-0.01, 0.01)^nq, then qvel = U(-0.01, 0.01)^nv
//           (the draws in that order, from the reset seed's stream); mj_forward (no
//           mj_rnePostConstraint: cfrc_ext stays zero).
//   step:   xy_before = mass_center; data.ctrl = action (not clipped); mj_step x frame_skip 5;
//           mj_rnePostConstraint; x_velocity = (x_after - x_before) / (timestep * 5);
//           reward = 1.25 x_velocity + 5 [1 < qpos[2] < 2] - (0.1 sum(data.ctrl^2)
//                    + clip(5e-7 sum(cfrc_ext^2), -inf, 10)); terminated = not healthy.
//   obs:    qpos[2:], qvel, cinert[1:], cvel[1:], qfrc_actuator[6:], cfrc_ext[1:].
// The trajectory drives the controls past their range of +-0.4 and runs through a fall and past
// it (Gymnasium lets an episode be stepped after it terminates), where the contact cost reaches
// its clip at 10. Observations must be bit-identical, rewards within 1e-9 (summation order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <mujoco/mujoco.h>

#include "envs/environment.hpp"
#include "envs/humanoid.hpp"
#include "envs/uniform.hpp"

namespace {

// Gymnasium's HumanoidEnv defaults (humanoid_v5.py), written here apart from the env's own.
constexpr int kFrameSkip = 5;
constexpr double kResetNoise = 0.01;
constexpr double kForwardWeight = 1.25;
constexpr double kHealthyReward = 5.0;
constexpr double kHealthyZLow = 1.0;
constexpr double kHealthyZHigh = 2.0;
constexpr double kCtrlWeight = 0.1;
constexpr double kContactWeight = 5e-7;
constexpr double kContactMax = 10.0;
constexpr double kControlBound = 0.4;  // humanoid_v5.xml's ctrlrange
constexpr int kLoadErrorLength = 1000;
constexpr double kRewardTolerance = 1e-9;
constexpr int kTrajectorySteps = 120;
constexpr std::uint64_t kSeed = 11;
constexpr double kActionAmplitude = 0.9;  // past the control range of +-0.4

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

// Gymnasium's HumanoidEnv written out by hand.
class GymnasiumHumanoidV5 {
 public:
  GymnasiumHumanoidV5() {
    char error[kLoadErrorLength] = "";
    model_.reset(mj_loadXML(FIBER_HUMANOID_V5_XML_FILE, nullptr, error, sizeof error));
    if (!model_) throw std::runtime_error(error);
    data_.reset(mj_makeData(model_.get()));
  }

  const mjModel& model() const { return *model_; }

  std::vector<double> reset(std::uint64_t seed) {
    mjModel* m = model_.get();
    mjData* d = data_.get();
    mj_resetData(m, d);
    fiber::rl::UniformRng rng(seed);
    for (int i = 0; i < m->nq; ++i)
      d->qpos[i] = m->qpos0[i] + rng.uniform(-kResetNoise, kResetNoise);
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = rng.uniform(-kResetNoise, kResetNoise);
    mj_forward(m, d);
    return observation();
  }

  struct Step {
    std::vector<double> observation;
    double reward = 0;
    double contact_cost = 0;
    bool terminated = false;
  };

  Step step(const std::vector<double>& action) {
    mjModel* m = model_.get();
    mjData* d = data_.get();
    const double x_before = mass_center_x();
    std::copy(action.begin(), action.end(), d->ctrl);
    for (int i = 0; i < kFrameSkip; ++i) mj_step(m, d);
    mj_rnePostConstraint(m, d);
    const double x_velocity = (mass_center_x() - x_before) / (m->opt.timestep * kFrameSkip);

    const bool healthy = kHealthyZLow < d->qpos[2] && d->qpos[2] < kHealthyZHigh;
    double ctrl_squares = 0;
    for (int i = 0; i < m->nu; ++i) ctrl_squares += d->ctrl[i] * d->ctrl[i];
    double force_squares = 0;
    for (int i = 0; i < 6 * m->nbody; ++i) force_squares += d->cfrc_ext[i] * d->cfrc_ext[i];

    Step out;
    out.contact_cost = std::min(kContactWeight * force_squares, kContactMax);
    out.reward = (kForwardWeight * x_velocity + (healthy ? kHealthyReward : 0.0)) -
                 (kCtrlWeight * ctrl_squares + out.contact_cost);
    out.terminated = !healthy;
    out.observation = observation();
    return out;
  }

 private:
  double mass_center_x() const {
    double weighted = 0;
    double mass = 0;
    for (int b = 0; b < model_->nbody; ++b) {
      weighted += model_->body_mass[b] * data_->xipos[3 * b];
      mass += model_->body_mass[b];
    }
    return weighted / mass;
  }

  std::vector<double> observation() const {
    const mjModel* m = model_.get();
    const mjData* d = data_.get();
    std::vector<double> obs;
    obs.insert(obs.end(), d->qpos + 2, d->qpos + m->nq);
    obs.insert(obs.end(), d->qvel, d->qvel + m->nv);
    obs.insert(obs.end(), d->cinert + 10, d->cinert + 10 * m->nbody);
    obs.insert(obs.end(), d->cvel + 6, d->cvel + 6 * m->nbody);
    obs.insert(obs.end(), d->qfrc_actuator + 6, d->qfrc_actuator + m->nv);
    obs.insert(obs.end(), d->cfrc_ext + 6, d->cfrc_ext + 6 * m->nbody);
    return obs;
  }

  std::unique_ptr<mjModel, ModelDeleter> model_;
  std::unique_ptr<mjData, DataDeleter> data_;
};

std::vector<double> as_vector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

std::vector<double> action_at(int t, int size) {
  std::vector<double> action(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) {
    action[static_cast<std::size_t>(i)] = kActionAmplitude * std::sin(0.31 * t + 0.7 * i);
  }
  return action;
}

TEST(HumanoidV5, SpacesAreGymnasiums) {
  auto env = fiber::rl::make_environment("Humanoid-v5");
  EXPECT_EQ(env->name(), "Humanoid-v5");
  // qpos[2:] 22 + qvel 23 + cinert 13*10 + cvel 13*6 + qfrc_actuator 17 + cfrc_ext 13*6.
  EXPECT_EQ(env->observation_size(), 348);
  EXPECT_EQ(env->max_episode_steps(), 1000);
  const auto& space = env->action_space();
  ASSERT_EQ(space.size, 17);
  for (std::size_t i = 0; i < 17; ++i) {
    EXPECT_EQ(space.low[i], -kControlBound);
    EXPECT_EQ(space.high[i], kControlBound);
  }
  EXPECT_DOUBLE_EQ(dynamic_cast<const fiber::rl::Humanoid&>(*env).dt(), 0.015);
}

TEST(HumanoidV5, TrajectoryMatchesGymnasiumsDefinition) {
  GymnasiumHumanoidV5 reference;
  auto env = fiber::rl::make_environment("Humanoid-v5");
  const int nu = reference.model().nu;

  ASSERT_EQ(as_vector(env->reset(kSeed)), reference.reset(kSeed)) << "reset observation";
  int out_of_range_steps = 0;
  int terminated_steps = 0;
  int clipped_contact_steps = 0;
  for (int t = 0; t < kTrajectorySteps; ++t) {
    const std::vector<double> action = action_at(t, nu);
    const auto expected = reference.step(action);
    const auto got = env->step(Eigen::Map<const Eigen::VectorXd>(action.data(), nu));
    ASSERT_EQ(as_vector(got.observation), expected.observation) << "step " << t;
    ASSERT_NEAR(got.reward, expected.reward, kRewardTolerance) << "step " << t;
    ASSERT_EQ(got.terminated, expected.terminated) << "step " << t;
    ASSERT_FALSE(got.truncated);
    out_of_range_steps += std::any_of(action.begin(), action.end(),
                                      [](double a) { return std::abs(a) > kControlBound; });
    terminated_steps += expected.terminated;
    clipped_contact_steps += expected.contact_cost == kContactMax;
  }
  // The trajectory covers what it is meant to.
  EXPECT_EQ(out_of_range_steps, kTrajectorySteps);
  EXPECT_GT(terminated_steps, 0) << "no fall";
  EXPECT_LT(terminated_steps, kTrajectorySteps) << "fell at once";
  EXPECT_GT(clipped_contact_steps, 0) << "the contact cost never reached its clip";
}

// Gymnasium's TimeLimit: truncated on the 1000th step, and not before (also after a fall).
TEST(HumanoidV5, TruncatedAtOneThousandSteps) {
  auto env = fiber::rl::make_environment("Humanoid-v5");
  env->reset(3);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(env->action_space().size);
  for (int t = 1; t <= env->max_episode_steps(); ++t) {
    ASSERT_EQ(env->step(zero).truncated, t == 1000) << "step " << t;
  }
}

}  // namespace
