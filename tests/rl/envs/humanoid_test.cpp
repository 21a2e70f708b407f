// The MuJoCo Humanoid: loading (and the error when the model is missing), observation size,
// determinism, the reward's terms, termination when it falls.
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

TEST(Humanoid, LoadsTheMujocoModel) {
  auto env = make_environment("Humanoid");
  EXPECT_EQ(env->name(), "Humanoid");
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

  Humanoid compact(Humanoid::Options{.xml_path = "", .full_observation = false});
  EXPECT_EQ(compact.observation_size(), 26 + 27);
  EXPECT_EQ(compact.reset(1).size(), 53);
}

TEST(Humanoid, ObservationSizeIsStable) {
  Humanoid env;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    ASSERT_EQ(env.reset(seed).size(), env.observation_size());
    for (int t = 0; t < 20; ++t) {
      ASSERT_EQ(env.step(wavy_action(env, t)).observation.size(), env.observation_size());
    }
  }
}

TEST(Humanoid, ResetAddsSmallNoiseToTheStandingPose) {
  Humanoid env;
  const Eigen::VectorXd a = env.reset(7);
  EXPECT_NEAR(env.torso_height(), 1.5, 0.01);  // the model's torso starts at z = 1.5
  EXPECT_NEAR(env.x_position(), 0.0, 0.01);
  EXPECT_NEAR(a(0), 1.5, 0.01);                              // observation starts at qpos[2]
  EXPECT_LE(a.segment(26, 27).cwiseAbs().maxCoeff(), 0.01);  // qvel: noise only
  const Eigen::VectorXd b = env.reset(8);
  EXPECT_NE(a, b);
}

TEST(Humanoid, SameSeedSameTrajectory) {
  Humanoid a;
  Humanoid b;
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
  Humanoid c;
  const Eigen::VectorXd start = c.reset(99);
  c.step(wavy_action(c, 0));
  EXPECT_EQ(c.reset(99), start);
}

TEST(Humanoid, RewardIsForwardPlusAliveBonusMinusControlCost) {
  Humanoid env;
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

TEST(Humanoid, ActionsAreClippedToTheControlRange) {
  Humanoid a;
  Humanoid b;
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

TEST(Humanoid, FallsWithZeroActionsAndTerminates) {
  auto env = make_environment("Humanoid");
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

TEST(Humanoid, MissingModelIsOneClearLine) {
  const std::string missing = "/nonexistent/fiber/humanoid.xml";
  const std::string what = load_error(Humanoid::Options{.xml_path = missing});
  EXPECT_NE(what.find(missing), std::string::npos) << what;
  EXPECT_NE(what.find("libmujoco-samples"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
}

TEST(Humanoid, BrokenModelIsOneClearLine) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "fiber_rl_envs_broken_humanoid.xml";
  {
    std::ofstream out(path);
    out << "<mujoco><worldbody><body><geom type=\"nonsense\"/></body>\n</worldbody></mujoco>\n";
  }
  const std::string what = load_error(Humanoid::Options{.xml_path = path.string()});
  std::filesystem::remove(path);
  EXPECT_NE(what.find(path.string()), std::string::npos) << what;
  EXPECT_NE(what.find("libmujoco-samples"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
}

TEST(Humanoid, ModelPathFromTheEnvironmentVariable) {
  const std::string missing = "/nonexistent/fiber/from-variable.xml";
  ASSERT_EQ(setenv(Humanoid::kXmlVariable, missing.c_str(), 1), 0);
  std::string what;
  try {
    make_environment("Humanoid");
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  ASSERT_EQ(setenv(Humanoid::kXmlVariable, Humanoid::kDefaultXml, 1), 0);
  Humanoid from_variable;
  EXPECT_EQ(from_variable.xml_path(), Humanoid::kDefaultXml);
  ASSERT_EQ(unsetenv(Humanoid::kXmlVariable), 0);
  EXPECT_NE(what.find(missing), std::string::npos) << what;
}

}  // namespace
