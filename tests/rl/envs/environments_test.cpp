// The classic-control environments against numbers computed from Gymnasium's equations by
// reference_values.py (numpy, float64), and the interface's contract: factory, action checks,
// truncation, determinism, initial state distributions.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/acrobot.hpp"
#include "envs/cartpole.hpp"
#include "envs/environment.hpp"
#include "envs/mountain_car_continuous.hpp"
#include "envs/pendulum.hpp"

namespace {

using fiber::rl::Acrobot;
using fiber::rl::CartPole;
using fiber::rl::Environment;
using fiber::rl::make_environment;
using fiber::rl::MountainCarContinuous;
using fiber::rl::Pendulum;
using fiber::rl::StepResult;

constexpr double kTol = 1e-12;
constexpr double kPi = std::numbers::pi;

Eigen::VectorXd act(double a) {
  Eigen::VectorXd v(1);
  v << a;
  return v;
}

void expect_near(const Eigen::VectorXd& actual, const std::vector<double>& expected,
                 double tol = kTol) {
  ASSERT_EQ(actual.size(), static_cast<Eigen::Index>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual(static_cast<Eigen::Index>(i)), expected[i], tol) << "entry " << i;
  }
}

// A deterministic action sequence that exercises the whole action space.
Eigen::VectorXd scripted_action(const Environment& env, int t) {
  const auto& space = env.action_space();
  if (space.discrete) return act(static_cast<double>((t * 7 + t / 3) % space.size));
  Eigen::VectorXd a(space.size);
  for (int i = 0; i < space.size; ++i) a(i) = 1.5 * std::sin(0.37 * t + i);
  return a;
}

// ---------------------------------------------------------------------------------------------
// Factory

TEST(Factory, KnowsTheNamesInOrder) {
  const std::vector<std::string> expected{"CartPole-v1", "Acrobot-v1",
                                          "Pendulum-v1", "MountainCarContinuous-v0",
                                          "Humanoid-v5", "Humanoid-MuJoCoModel"};
  EXPECT_EQ(fiber::rl::environment_names(), expected);
  for (const char* name :
       {"CartPole-v1", "Acrobot-v1", "Pendulum-v1", "MountainCarContinuous-v0"}) {
    auto env = make_environment(name);
    ASSERT_NE(env, nullptr);
    EXPECT_EQ(env->name(), name);
  }
}

TEST(Factory, UnknownNameListsTheKnownNames) {
  try {
    make_environment("CartPole-v0");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown environment 'CartPole-v0'"), std::string::npos) << what;
    for (const std::string& name : fiber::rl::environment_names()) {
      EXPECT_NE(what.find(name), std::string::npos) << name << " missing from: " << what;
    }
  }
  EXPECT_THROW(make_environment(""), std::invalid_argument);
}

TEST(Factory, SpacesAndLimits) {
  auto cartpole = make_environment("CartPole-v1");
  EXPECT_EQ(cartpole->observation_size(), 4);
  EXPECT_TRUE(cartpole->action_space().discrete);
  EXPECT_EQ(cartpole->action_space().size, 2);
  EXPECT_EQ(cartpole->action_space().dimension(), 1);
  EXPECT_EQ(cartpole->max_episode_steps(), 500);

  auto acrobot = make_environment("Acrobot-v1");
  EXPECT_EQ(acrobot->observation_size(), 6);
  EXPECT_TRUE(acrobot->action_space().discrete);
  EXPECT_EQ(acrobot->action_space().size, 3);
  EXPECT_EQ(acrobot->max_episode_steps(), 500);

  auto pendulum = make_environment("Pendulum-v1");
  EXPECT_EQ(pendulum->observation_size(), 3);
  EXPECT_FALSE(pendulum->action_space().discrete);
  EXPECT_EQ(pendulum->action_space().size, 1);
  EXPECT_EQ(pendulum->action_space().low, std::vector<double>{-2.0});
  EXPECT_EQ(pendulum->action_space().high, std::vector<double>{2.0});
  EXPECT_EQ(pendulum->max_episode_steps(), 200);

  auto car = make_environment("MountainCarContinuous-v0");
  EXPECT_EQ(car->observation_size(), 2);
  EXPECT_FALSE(car->action_space().discrete);
  EXPECT_EQ(car->action_space().dimension(), 1);
  EXPECT_EQ(car->action_space().low, std::vector<double>{-1.0});
  EXPECT_EQ(car->action_space().high, std::vector<double>{1.0});
  EXPECT_EQ(car->max_episode_steps(), 999);
}

// ---------------------------------------------------------------------------------------------
// Action checks

TEST(Actions, StepBeforeResetIsAnError) {
  auto env = make_environment("CartPole-v1");
  EXPECT_THROW(env->step(act(0)), std::logic_error);
}

TEST(Actions, BadActionsAreRejected) {
  auto cartpole = make_environment("CartPole-v1");
  cartpole->reset(1);
  EXPECT_THROW(cartpole->step(act(2)), std::invalid_argument);
  EXPECT_THROW(cartpole->step(act(-1)), std::invalid_argument);
  EXPECT_THROW(cartpole->step(act(0.5)), std::invalid_argument);
  EXPECT_THROW(cartpole->step(act(std::nan(""))), std::invalid_argument);
  EXPECT_THROW(cartpole->step(Eigen::VectorXd::Zero(2)), std::invalid_argument);
  EXPECT_THROW(cartpole->step(Eigen::VectorXd()), std::invalid_argument);
  EXPECT_EQ(cartpole->elapsed_steps(), 0);  // nothing counted
  EXPECT_NO_THROW(cartpole->step(act(1)));

  auto pendulum = make_environment("Pendulum-v1");
  pendulum->reset(1);
  EXPECT_THROW(pendulum->step(Eigen::VectorXd::Zero(2)), std::invalid_argument);
  EXPECT_THROW(pendulum->step(act(std::nan(""))), std::invalid_argument);
  EXPECT_NO_THROW(pendulum->step(act(1e9)));  // clipped, not rejected
}

// ---------------------------------------------------------------------------------------------
// CartPole-v1

TEST(CartPole, StepsMatchGymnasium) {
  CartPole env;
  expect_near(env.set_state({0.01, -0.02, 0.03, 0.04}), {0.01, -0.02, 0.03, 0.04});
  StepResult r = env.step(act(1));
  expect_near(r.observation, {0.009600000000000001, 0.17467919574755525, 0.030799999999999998,
                              -0.2430687179600081});
  EXPECT_EQ(r.reward, 1.0);
  EXPECT_FALSE(r.terminated);
  EXPECT_FALSE(r.truncated);
  r = env.step(act(0));
  expect_near(r.observation, {0.013093583914951107, -0.020868848948191993, 0.025938625640799837,
                              0.0591679999394166});
  EXPECT_EQ(r.reward, 1.0);
  r = env.step(act(1));
  expect_near(r.observation, {0.012676206935987267, 0.1738717748734813, 0.02712198563958817,
                              -0.22521957255967326});
  EXPECT_FALSE(r.terminated);
  EXPECT_EQ(env.elapsed_steps(), 3);
}

TEST(CartPole, ThresholdConstants) {
  EXPECT_DOUBLE_EQ(CartPole::kThetaThresholdRadians, 0.20943951023931953);  // 12 degrees
  EXPECT_EQ(CartPole::kXThreshold, 2.4);
}

TEST(CartPole, TerminatesWhenThePoleFallsThenRewardsZero) {
  CartPole env;
  env.set_state({0.0, 0.0, 0.2, 0.5});
  StepResult r = env.step(act(1));
  expect_near(r.observation, {0.0, 0.1918240025983404, 0.21000000000000002, 0.2764083425922006});
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.reward, 1.0);  // the terminating step is rewarded
  r = env.step(act(1));      // past termination: Gymnasium's undefined steps, reward 0
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 0.0);
}

TEST(CartPole, TerminatesWhenTheCartLeavesTheTrack) {
  CartPole env;
  env.set_state({2.39, 1.0, 0.0, 0.0});
  const StepResult r = env.step(act(1));
  expect_near(r.observation, {2.41, 1.1951219512195121, 0.0, -0.2926829268292683});
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 1.0);
}

TEST(CartPole, TruncatesAt500WhenBalanced) {
  CartPole env;
  Eigen::VectorXd obs = env.set_state({0.03, -0.01, 0.02, 0.04});
  double total = 0.0;
  for (int t = 1; t <= 500; ++t) {
    // A linear controller on the state that balances the pole (checked with the reference).
    const double push = 10 * obs(2) + obs(3) + 0.1 * obs(0) + 0.5 * obs(1);
    const StepResult r = env.step(act(push > 0 ? 1 : 0));
    total += r.reward;
    ASSERT_FALSE(r.terminated) << "fell at step " << t;
    ASSERT_EQ(r.truncated, t == 500) << "step " << t;
    obs = r.observation;
  }
  EXPECT_EQ(total, 500.0);
  // A reset starts a new episode with its own count.
  env.reset(3);
  EXPECT_EQ(env.elapsed_steps(), 0);
  EXPECT_FALSE(env.step(act(0)).truncated);
}

TEST(CartPole, InitialStateIsUniformInPlusMinus005) {
  CartPole env;
  Eigen::Vector4d lo = Eigen::Vector4d::Constant(1.0);
  Eigen::Vector4d hi = Eigen::Vector4d::Constant(-1.0);
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    const Eigen::VectorXd obs = env.reset(seed);
    ASSERT_EQ(obs.size(), 4);
    lo = lo.cwiseMin(obs.head<4>());
    hi = hi.cwiseMax(obs.head<4>());
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(lo(i), -0.05);
    EXPECT_LT(hi(i), 0.05);
    EXPECT_LT(lo(i), -0.045);  // spread over the whole interval
    EXPECT_GT(hi(i), 0.045);
  }
}

// ---------------------------------------------------------------------------------------------
// Acrobot-v1

std::vector<double> acrobot_obs(double t1, double t2, double dt1, double dt2) {
  return {std::cos(t1), std::sin(t1), std::cos(t2), std::sin(t2), dt1, dt2};
}

TEST(Acrobot, StepsMatchGymnasium) {
  Acrobot env;
  expect_near(env.set_state({0.1, -0.2, 0.3, -0.4}), acrobot_obs(0.1, -0.2, 0.3, -0.4));
  StepResult r = env.step(act(2));
  expect_near(r.observation, acrobot_obs(0.1282116312891261, -0.211840321026976,
                                         -0.023484731535001357, 0.28679521459777013));
  // Observation values as Gymnasium prints them.
  EXPECT_NEAR(r.observation(0), 0.9917921415984723, kTol);
  EXPECT_NEAR(r.observation(3), -0.21025943668356165, kTol);
  EXPECT_EQ(r.reward, -1.0);
  EXPECT_FALSE(r.terminated);
  r = env.step(act(0));
  expect_near(r.observation, acrobot_obs(0.11784404947450917, -0.15731524450506706,
                                         -0.07632067137914837, 0.24745843481895552));
  EXPECT_EQ(r.reward, -1.0);
  r = env.step(act(1));
  expect_near(r.observation, acrobot_obs(0.08636069337858428, -0.08309034842545675,
                                         -0.22976340908300208, 0.4771579394626573));
  EXPECT_NEAR(env.state()(0), 0.08636069337858428, kTol);
  EXPECT_EQ(r.reward, -1.0);
  EXPECT_FALSE(r.terminated);
}

TEST(Acrobot, TerminatesAboveTheLineWithRewardZero) {
  Acrobot env;
  env.set_state({kPi - 0.1, 0.0, 0.0, 0.0});
  const StepResult r = env.step(act(1));
  expect_near(r.observation, acrobot_obs(3.028898166716368, 0.009908045647642576,
                                         -0.1298026367179235, 0.10270642028538184));
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 0.0);
}

TEST(Acrobot, WrapsAnglesAndBoundsVelocities) {
  Acrobot env;
  env.set_state({3.0, 0.0, 3.0, 0.0});
  StepResult r = env.step(act(1));
  EXPECT_NEAR(env.state()(0), -2.676220167383653, kTol);  // wrapped past pi
  EXPECT_NEAR(env.state()(1), -0.005419132430482961, kTol);
  EXPECT_NEAR(env.state()(2), 3.192974672878864, kTol);
  EXPECT_NEAR(env.state()(3), -0.14800361435562148, kTol);
  EXPECT_TRUE(r.terminated);

  env.set_state({0.0, 0.0, 20.0, -40.0});
  r = env.step(act(1));
  EXPECT_NEAR(env.state()(0), -1.1107822510384695, kTol);
  EXPECT_NEAR(env.state()(1), 1.7194039945148774, kTol);
  EXPECT_EQ(env.state()(2), 4 * kPi);
  EXPECT_EQ(env.state()(3), -9 * kPi);
  EXPECT_EQ(r.reward, -1.0);
  EXPECT_FALSE(r.terminated);
}

TEST(Acrobot, TruncatesAt500HangingDown) {
  Acrobot env;
  env.set_state({0.0, 0.0, 0.0, 0.0});
  double total = 0.0;
  for (int t = 1; t <= 500; ++t) {
    const StepResult r = env.step(act(1));  // no torque: it stays down
    total += r.reward;
    ASSERT_FALSE(r.terminated);
    ASSERT_EQ(r.truncated, t == 500) << "step " << t;
  }
  EXPECT_EQ(total, -500.0);
}

TEST(Acrobot, InitialStateIsUniformInPlusMinus01) {
  Acrobot env;
  double lo = 1.0;
  double hi = -1.0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const Eigen::VectorXd obs = env.reset(seed);
    ASSERT_EQ(obs.size(), 6);
    const Eigen::Vector4d& s = env.state();
    lo = std::min(lo, s.minCoeff());
    hi = std::max(hi, s.maxCoeff());
    EXPECT_NEAR(obs(0), std::cos(s(0)), 1e-15);
    EXPECT_NEAR(obs(1), std::sin(s(0)), 1e-15);
    EXPECT_EQ(obs(4), s(2));
    EXPECT_EQ(obs(5), s(3));
  }
  EXPECT_GE(lo, -0.1);
  EXPECT_LE(hi, 0.1);
  EXPECT_LT(lo, -0.095);
  EXPECT_GT(hi, 0.095);
}

// ---------------------------------------------------------------------------------------------
// Pendulum-v1

std::vector<double> pendulum_obs(double th, double thdot) {
  return {std::cos(th), std::sin(th), thdot};
}

TEST(Pendulum, StepsMatchGymnasiumWithClippedTorque) {
  Pendulum env;
  expect_near(env.set_state({1.0, 0.5}), pendulum_obs(1.0, 0.5));
  StepResult r = env.step(act(1.5));
  expect_near(r.observation, pendulum_obs(1.0678051619302962, 1.3561032386059226));
  EXPECT_NEAR(r.observation(0), 0.48204838409011624, kTol);
  EXPECT_NEAR(r.reward, -1.02725, kTol);
  EXPECT_FALSE(r.terminated);
  r = env.step(act(5.0));  // clipped to 2
  expect_near(r.observation, pendulum_obs(1.1834657462597302, 2.313211686588682));
  EXPECT_NEAR(r.reward, -1.3281094632207342, kTol);
  r = env.step(act(-3.0));  // clipped to -2
  expect_near(r.observation, pendulum_obs(1.318848354801076, 2.7076521708269152));
  EXPECT_NEAR(r.reward, -1.9396860032671461, kTol);
}

TEST(Pendulum, ClippedTorqueActsAsTheBound) {
  Pendulum a;
  Pendulum b;
  a.set_state({0.3, -0.2});
  b.set_state({0.3, -0.2});
  const StepResult ra = a.step(act(100.0));
  const StepResult rb = b.step(act(2.0));
  EXPECT_EQ(ra.observation, rb.observation);
  EXPECT_EQ(ra.reward, rb.reward);
}

TEST(Pendulum, RewardUsesTheNormalizedAngle) {
  Pendulum env;
  env.set_state({4.0, -0.3});
  StepResult r = env.step(act(0.0));
  EXPECT_NEAR(r.reward, -5.221935146920742, kTol);
  expect_near(r.observation, pendulum_obs(3.956619906425953, -0.8676018714809461));
  EXPECT_NEAR(env.state()(0), 3.956619906425953, kTol);  // the state itself is not wrapped

  env.set_state({-7.0, 2.0});
  r = env.step(act(1.0));
  EXPECT_NEAR(r.reward, -0.9148233038432242, kTol);
  EXPECT_NEAR(env.state()(0), -6.917136997451955, kTol);
  EXPECT_NEAR(env.state()(1), 1.6572600509609081, kTol);

  EXPECT_NEAR(Pendulum::angle_normalize(-7.0), -7.0 + 2 * kPi, 1e-15);
  EXPECT_NEAR(Pendulum::angle_normalize(4.0), 4.0 - 2 * kPi, 1e-15);
  EXPECT_EQ(Pendulum::angle_normalize(kPi), -kPi);  // [-pi, pi)
}

TEST(Pendulum, SpeedIsClippedTo8) {
  Pendulum env;
  env.set_state({kPi / 2, 7.9});
  const StepResult r = env.step(act(2.0));
  EXPECT_EQ(env.state()(1), 8.0);
  EXPECT_NEAR(env.state()(0), 1.9707963267948965, kTol);
  EXPECT_NEAR(r.reward, -8.71240110027234, kTol);
}

TEST(Pendulum, TruncatesAt200NeverTerminates) {
  auto env = make_environment("Pendulum-v1");
  env->reset(11);
  for (int t = 1; t <= 200; ++t) {
    const StepResult r = env->step(scripted_action(*env, t));
    ASSERT_FALSE(r.terminated);
    ASSERT_EQ(r.truncated, t == 200) << "step " << t;
    ASSERT_LE(r.reward, 0.0);
    ASSERT_GE(r.reward, -16.2736044);  // Gymnasium's documented minimum
  }
}

TEST(Pendulum, InitialStateDistribution) {
  Pendulum env;
  double th_lo = 10;
  double th_hi = -10;
  double v_lo = 10;
  double v_hi = -10;
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    env.reset(seed);
    th_lo = std::min(th_lo, env.state()(0));
    th_hi = std::max(th_hi, env.state()(0));
    v_lo = std::min(v_lo, env.state()(1));
    v_hi = std::max(v_hi, env.state()(1));
  }
  EXPECT_GE(th_lo, -kPi);
  EXPECT_LT(th_hi, kPi);
  EXPECT_LT(th_lo, -3.0);
  EXPECT_GT(th_hi, 3.0);
  EXPECT_GE(v_lo, -1.0);
  EXPECT_LT(v_hi, 1.0);
  EXPECT_LT(v_lo, -0.95);
  EXPECT_GT(v_hi, 0.95);
}

// ---------------------------------------------------------------------------------------------
// MountainCarContinuous-v0

TEST(MountainCarContinuous, StepsMatchGymnasium) {
  MountainCarContinuous env;
  expect_near(env.set_state({-0.5, 0.0}), {-0.5, 0.0});
  StepResult r = env.step(act(0.5));
  expect_near(r.observation, {-0.49942684300416923, 0.0005731569958307427});
  EXPECT_NEAR(r.reward, -0.025, kTol);
  EXPECT_FALSE(r.terminated);
  // Clipped to 1 for the force; the penalty uses the action as given (Gymnasium).
  r = env.step(act(2.0));
  expect_near(r.observation, {-0.49753481665819366, 0.0018920263459755455});
  EXPECT_NEAR(r.reward, -0.4, kTol);
  r = env.step(act(-1.0));
  expect_near(r.observation, {-0.49733807087233717, 0.0001967457858564703});
  EXPECT_NEAR(r.reward, -0.1, kTol);
}

TEST(MountainCarContinuous, ClippedActionMovesTheCarAsTheBound) {
  MountainCarContinuous a;
  MountainCarContinuous b;
  a.set_state({-0.3, 0.01});
  b.set_state({-0.3, 0.01});
  const StepResult ra = a.step(act(-7.0));
  const StepResult rb = b.step(act(-1.0));
  EXPECT_EQ(ra.observation, rb.observation);
  EXPECT_NEAR(ra.reward, -4.9, kTol);
  EXPECT_NEAR(rb.reward, -0.1, kTol);
}

TEST(MountainCarContinuous, GoalGivesHundredAndTerminates) {
  MountainCarContinuous env;
  env.set_state({0.44, 0.05});
  const StepResult r = env.step(act(1.0));
  expect_near(r.observation, {0.4908795613708691, 0.05087956137086907});
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.truncated);
  EXPECT_NEAR(r.reward, 99.9, kTol);
}

TEST(MountainCarContinuous, LeftWallStopsTheCar) {
  MountainCarContinuous env;
  env.set_state({-1.19, -0.05});
  const StepResult r = env.step(act(-1.0));
  EXPECT_EQ(r.observation(0), -1.2);
  EXPECT_EQ(r.observation(1), 0.0);
  EXPECT_FALSE(r.terminated);
  EXPECT_NEAR(r.reward, -0.1, kTol);
}

TEST(MountainCarContinuous, TruncatesAt999) {
  auto env = make_environment("MountainCarContinuous-v0");
  env->reset(5);
  for (int t = 1; t <= 999; ++t) {
    const StepResult r = env->step(act(0.0));  // never climbs out without pushing
    ASSERT_FALSE(r.terminated);
    ASSERT_EQ(r.truncated, t == 999) << "step " << t;
    ASSERT_EQ(r.reward, 0.0);
  }
}

TEST(MountainCarContinuous, InitialStateDistribution) {
  MountainCarContinuous env;
  double lo = 0;
  double hi = -1;
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    const Eigen::VectorXd obs = env.reset(seed);
    ASSERT_EQ(obs.size(), 2);
    EXPECT_EQ(obs(1), 0.0);
    lo = std::min(lo, obs(0));
    hi = std::max(hi, obs(0));
  }
  EXPECT_GE(lo, -0.6);
  EXPECT_LT(hi, -0.4);
  EXPECT_LT(lo, -0.59);
  EXPECT_GT(hi, -0.41);
}

// ---------------------------------------------------------------------------------------------
// Determinism, for every classic environment

class Determinism : public ::testing::TestWithParam<std::string> {};

TEST_P(Determinism, SameSeedSameTrajectoryDifferentSeedDifferentStart) {
  auto a = make_environment(GetParam());
  auto b = make_environment(GetParam());
  auto c = make_environment(GetParam());
  const Eigen::VectorXd obs_a = a->reset(12345);
  const Eigen::VectorXd obs_b = b->reset(12345);
  const Eigen::VectorXd obs_c = c->reset(12346);
  ASSERT_EQ(obs_a.size(), a->observation_size());
  EXPECT_EQ(obs_a, obs_b);
  EXPECT_NE(obs_a, obs_c);
  for (int t = 0; t < 60; ++t) {
    const Eigen::VectorXd action = scripted_action(*a, t);
    const StepResult ra = a->step(action);
    const StepResult rb = b->step(action);
    ASSERT_EQ(ra.observation, rb.observation) << "step " << t;
    ASSERT_EQ(ra.reward, rb.reward);
    ASSERT_EQ(ra.terminated, rb.terminated);
    ASSERT_EQ(ra.truncated, rb.truncated);
    ASSERT_EQ(ra.observation.size(), a->observation_size());
  }
  // A reset with the same seed replays the same start, whatever came before.
  EXPECT_EQ(a->reset(12345), obs_b);
  EXPECT_EQ(a->elapsed_steps(), 0);
}

INSTANTIATE_TEST_SUITE_P(Classic, Determinism,
                         ::testing::Values("CartPole-v1", "Acrobot-v1", "Pendulum-v1",
                                           "MountainCarContinuous-v0"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string id;
                           for (char ch : param_info.param) {
                             if (std::isalnum(static_cast<unsigned char>(ch))) id += ch;
                           }
                           return id;
                         });

}  // namespace
