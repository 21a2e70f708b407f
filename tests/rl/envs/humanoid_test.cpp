// The MuJoCo humanoids. Humanoid-MuJoCoModel: loading (and the error when the model is missing),
// observation size, determinism, the reward's terms, termination when it falls. Both: a state
// restored on another environment object continues bit for bit. (Humanoid-v5 against
// Gymnasium's definition: humanoid_v5_reference_test.cpp.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "envs/environment.hpp"
#include "envs/humanoid.hpp"

namespace {

using fiber::rl::Humanoid;
using fiber::rl::make_environment;
using fiber::rl::StepResult;

const Humanoid::Options kMujocoModel{
    .model = Humanoid::Model::mujoco, .xml_path = "", .full_observation = true};

Humanoid::Options mujoco_model_at(const std::string& path) {
  Humanoid::Options options = kMujocoModel;
  options.xml_path = path;
  return options;
}

Eigen::VectorXd zero_action(const fiber::rl::Environment& env) {
  return Eigen::VectorXd::Zero(env.action_space().size);
}

Eigen::VectorXd wavy_action(const fiber::rl::Environment& env, int t) {
  Eigen::VectorXd a(env.action_space().size);
  for (int i = 0; i < a.size(); ++i) a(i) = 0.8 * std::sin(0.3 * t + 0.7 * i);
  return a;
}

std::string load_error(const Humanoid::Options& options) {
  try {
    Humanoid env(options);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(HumanoidMujocoModel, LoadsTheMujocoModel) {
  auto env = make_environment("Humanoid-MuJoCoModel");
  EXPECT_EQ(env->name(), "Humanoid-MuJoCoModel");
  EXPECT_EQ(env->max_episode_steps(), 1000);
  // qpos[2:] 26 + qvel 27 + cinert 16*10 + cvel 16*6 + qfrc_actuator 21 + cfrc_ext 16*6.
  EXPECT_EQ(env->observation_size(), 426);
  const auto& space = env->action_space();
  EXPECT_FALSE(space.discrete);
  ASSERT_EQ(space.size, 21);
  for (int i = 0; i < space.size; ++i) {
    EXPECT_EQ(space.low[static_cast<std::size_t>(i)], -1.0);
    EXPECT_EQ(space.high[static_cast<std::size_t>(i)], 1.0);
  }
  const auto* humanoid = dynamic_cast<const Humanoid*>(env.get());
  ASSERT_NE(humanoid, nullptr);
  EXPECT_NEAR(humanoid->dt(), 0.025, 1e-15);  // timestep 0.005, frame_skip 5

  Humanoid compact(Humanoid::Options{
      .model = Humanoid::Model::mujoco, .xml_path = "", .full_observation = false});
  EXPECT_EQ(compact.observation_size(), 26 + 27);
  EXPECT_EQ(compact.reset(1).size(), 53);
}

TEST(HumanoidMujocoModel, ObservationSizeIsStable) {
  Humanoid env(kMujocoModel);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    ASSERT_EQ(env.reset(seed).size(), env.observation_size());
    for (int t = 0; t < 20; ++t) {
      ASSERT_EQ(env.step(wavy_action(env, t)).observation.size(), env.observation_size());
    }
  }
}

TEST(HumanoidMujocoModel, ResetAddsSmallNoiseToTheStandingPose) {
  Humanoid env(kMujocoModel);
  const Eigen::VectorXd a = env.reset(7);
  EXPECT_NEAR(env.torso_height(), 1.5, 0.01);  // the model's torso starts at z = 1.5
  EXPECT_NEAR(env.x_position(), 0.0, 0.01);
  EXPECT_NEAR(a(0), 1.5, 0.01);                              // observation starts at qpos[2]
  EXPECT_LE(a.segment(26, 27).cwiseAbs().maxCoeff(), 0.01);  // qvel: noise only
  const Eigen::VectorXd b = env.reset(8);
  EXPECT_NE(a, b);
}

TEST(HumanoidMujocoModel, SameSeedSameTrajectory) {
  Humanoid a(kMujocoModel);
  Humanoid b(kMujocoModel);
  ASSERT_EQ(a.reset(99), b.reset(99));
  for (int t = 0; t < 40; ++t) {
    const StepResult ra = a.step(wavy_action(a, t));
    const StepResult rb = b.step(wavy_action(b, t));
    ASSERT_EQ(ra.observation, rb.observation) << "step " << t;
    ASSERT_EQ(ra.reward, rb.reward);
    ASSERT_EQ(ra.terminated, rb.terminated);
    if (ra.terminated) break;
  }
  // Replaying the seed on a used environment gives the same start again.
  Humanoid c(kMujocoModel);
  const Eigen::VectorXd start = c.reset(99);
  c.step(wavy_action(c, 0));
  EXPECT_EQ(c.reset(99), start);
}

TEST(HumanoidMujocoModel, RewardIsForwardPlusAliveBonusMinusControlCost) {
  Humanoid env(kMujocoModel);
  env.reset(3);
  StepResult r = env.step(zero_action(env));
  ASSERT_FALSE(r.terminated);
  auto terms = env.last_reward_terms();
  EXPECT_EQ(terms.healthy, 5.0);
  EXPECT_EQ(terms.ctrl_cost, 0.0);
  EXPECT_NEAR(terms.forward, 1.25 * terms.x_velocity, 1e-12);
  EXPECT_NEAR(r.reward, 5.0 + terms.forward, 1e-12);
  EXPECT_NEAR(r.reward, 5.0, 0.5);  // it barely moves in one step

  const Eigen::VectorXd action = wavy_action(env, 4);
  r = env.step(action);
  ASSERT_FALSE(r.terminated);
  terms = env.last_reward_terms();
  EXPECT_NEAR(terms.ctrl_cost, 0.1 * action.squaredNorm(), 1e-12);
  EXPECT_NEAR(r.reward, terms.forward + 5.0 - terms.ctrl_cost, 1e-12);
}

TEST(HumanoidMujocoModel, ActionsAreClippedToTheControlRange) {
  Humanoid a(kMujocoModel);
  Humanoid b(kMujocoModel);
  a.reset(5);
  b.reset(5);
  const Eigen::VectorXd big = Eigen::VectorXd::Constant(a.action_space().size, 3.0);
  const Eigen::VectorXd one = Eigen::VectorXd::Constant(a.action_space().size, 1.0);
  const StepResult ra = a.step(big);
  const StepResult rb = b.step(one);
  EXPECT_EQ(ra.observation, rb.observation);
  EXPECT_EQ(ra.reward, rb.reward);
  EXPECT_NEAR(a.last_reward_terms().ctrl_cost, 0.1 * 21, 1e-12);
}

TEST(HumanoidMujocoModel, FallsWithZeroActionsAndTerminates) {
  auto env = make_environment("Humanoid-MuJoCoModel");
  const auto& humanoid = dynamic_cast<const Humanoid&>(*env);
  env->reset(2024);
  double total = 0.0;
  int steps = 0;
  StepResult r;
  while (steps < env->max_episode_steps()) {
    r = env->step(zero_action(*env));
    ++steps;
    total += r.reward;
    if (r.terminated || r.truncated) break;
    ASSERT_GT(humanoid.torso_height(), 1.0);
    ASSERT_LT(humanoid.torso_height(), 2.0);
    ASSERT_EQ(humanoid.last_reward_terms().healthy, 5.0);
  }
  EXPECT_TRUE(r.terminated) << "still standing after " << steps << " steps";
  EXPECT_FALSE(r.truncated);
  EXPECT_LT(steps, 1000);
  EXPECT_LE(humanoid.torso_height(), 1.0);
  EXPECT_EQ(humanoid.last_reward_terms().healthy, 0.0);  // no bonus on the falling step
  EXPECT_NEAR(r.reward, humanoid.last_reward_terms().forward, 1e-12);
  EXPECT_GT(total, 5.0 * (steps - 1) - 50.0);  // the bonus dominates while standing
}

TEST(HumanoidMujocoModel, MissingModelIsOneClearLine) {
  const std::string missing = "/nonexistent/fiber/humanoid.xml";
  const std::string what = load_error(mujoco_model_at(missing));
  EXPECT_NE(what.find(missing), std::string::npos) << what;
  EXPECT_NE(what.find("libmujoco-samples"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
}

TEST(HumanoidMujocoModel, BrokenModelIsOneClearLine) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "fiber_rl_envs_broken_humanoid.xml";
  {
    std::ofstream out(path);
    out << "<mujoco><worldbody><body><geom type=\"nonsense\"/></body>\n</worldbody></mujoco>\n";
  }
  const std::string what = load_error(mujoco_model_at(path.string()));
  std::filesystem::remove(path);
  EXPECT_NE(what.find(path.string()), std::string::npos) << what;
  EXPECT_NE(what.find("libmujoco-samples"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
}

TEST(HumanoidMujocoModel, ModelPathFromTheEnvironmentVariable) {
  const std::string missing = "/nonexistent/fiber/from-variable.xml";
  ASSERT_EQ(setenv(Humanoid::kXmlVariable, missing.c_str(), 1), 0);
  std::string what;
  try {
    make_environment("Humanoid-MuJoCoModel");
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  ASSERT_EQ(setenv(Humanoid::kXmlVariable, Humanoid::kMujocoXml, 1), 0);
  Humanoid from_variable(kMujocoModel);
  EXPECT_EQ(from_variable.xml_path(), Humanoid::kMujocoXml);
  ASSERT_EQ(unsetenv(Humanoid::kXmlVariable), 0);
  EXPECT_NE(what.find(missing), std::string::npos) << what;
}

// Humanoid-v5 has its model built in: the variable for MuJoCo's model file does not move it.
TEST(HumanoidV5, BuiltInModelWhateverTheVariableSays) {
  ASSERT_EQ(setenv(Humanoid::kXmlVariable, "/nonexistent/fiber/humanoid.xml", 1), 0);
  Humanoid v5;
  ASSERT_EQ(unsetenv(Humanoid::kXmlVariable), 0);
  EXPECT_EQ(v5.name(), "Humanoid-v5");
  EXPECT_EQ(v5.xml_path(), "");
  EXPECT_EQ(v5.observation_size(), 348);
}

// A state() taken mid-episode and set on another object continues bit for bit: the observation
// set_state() returns is the original's, and the steps after it too (PPO moves a slot's episode
// between workers this way).
TEST(HumanoidState, RestoredOnAnotherObjectContinuesBitForBit) {
  for (const char* name : {"Humanoid-v5", "Humanoid-MuJoCoModel"}) {
    auto original = make_environment(name);
    auto copy = make_environment(name);
    auto& restored = dynamic_cast<Humanoid&>(*copy);
    original->reset(21);
    Eigen::VectorXd observation;
    for (int t = 0; t < 7; ++t) observation = original->step(wavy_action(*original, t)).observation;
    copy->reset(5);
    copy->step(wavy_action(*copy, 3));  // a different state and history before the restore
    const auto& source = dynamic_cast<const Humanoid&>(*original);
    ASSERT_EQ(restored.set_state(source.state()), observation) << name;
    EXPECT_EQ(restored.state(), source.state()) << name;
    EXPECT_EQ(copy->elapsed_steps(), 0) << name;
    for (int t = 7; t < 40; ++t) {
      const StepResult x = original->step(wavy_action(*original, t));
      const StepResult y = copy->step(wavy_action(*copy, t));
      ASSERT_EQ(x.observation, y.observation) << name << " step " << t;
      ASSERT_EQ(x.reward, y.reward) << name << " step " << t;
      ASSERT_EQ(x.terminated, y.terminated) << name << " step " << t;
    }
  }
}

TEST(HumanoidState, StateOfAnotherSizeIsRefused) {
  Humanoid v5;
  Humanoid mujoco(kMujocoModel);
  v5.reset(1);
  mujoco.reset(1);
  EXPECT_THROW(v5.set_state(mujoco.state()), std::invalid_argument);
  EXPECT_THROW(v5.set_state({1.0, 2.0}), std::invalid_argument);
  EXPECT_EQ(static_cast<int>(v5.state().size()), v5.state_size());
}

}  // namespace
