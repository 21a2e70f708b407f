// Policy heads: argmax, softmax sampling and its log-probabilities, clipped and Gaussian
// continuous actions, act().
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "policy/action.hpp"

namespace fiber::rl {
namespace {

// d f / d x by central differences.
template <class F>
Eigen::VectorXd numeric_gradient(F f, const Eigen::VectorXd& x, double h = 1e-6) {
  Eigen::VectorXd g(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    Eigen::VectorXd xp = x;
    Eigen::VectorXd xm = x;
    xp[i] += h;
    xm[i] -= h;
    g[i] = (f(xp) - f(xm)) / (2 * h);
  }
  return g;
}

TEST(DiscretePolicy, ArgmaxTakesTheFirstMaximumAndIgnoresNan) {
  EXPECT_EQ(DiscretePolicy::deterministic(Eigen::Vector3d(0.1, 2.0, -1.0)), 1);
  EXPECT_EQ(DiscretePolicy::deterministic(Eigen::Vector4d(1.0, 3.0, 3.0, 0.0)), 1);
  EXPECT_EQ(DiscretePolicy::deterministic(Eigen::Vector2d(-5.0, -5.0)), 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(DiscretePolicy::deterministic(Eigen::Vector3d(nan, -1.0, 0.5)), 2);
  EXPECT_THROW(DiscretePolicy::deterministic(Eigen::VectorXd()), std::invalid_argument);
}

TEST(DiscretePolicy, ProbabilitiesAndLogProbabilities) {
  const Eigen::Vector3d logits(1.0, 2.0, 0.5);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
  const Eigen::VectorXd p = DiscretePolicy::probabilities(logits);
  EXPECT_NEAR(p[0], std::exp(1.0) / z, 1e-15);
  EXPECT_NEAR(p[1], std::exp(2.0) / z, 1e-15);
  EXPECT_NEAR(p[2], std::exp(0.5) / z, 1e-15);
  EXPECT_NEAR(DiscretePolicy::log_prob(logits, 2), 0.5 - std::log(z), 1e-14);
  // Large logits do not overflow.
  const Eigen::VectorXd big = DiscretePolicy::probabilities(Eigen::Vector2d(1000.0, 1000.0));
  EXPECT_DOUBLE_EQ(big[0], 0.5);
  EXPECT_THROW(DiscretePolicy::log_prob(logits, 3), std::out_of_range);
  EXPECT_THROW(DiscretePolicy::log_prob(logits, -1), std::out_of_range);

  double h = 0.0;
  for (int i = 0; i < 3; ++i) h -= p[i] * std::log(p[i]);
  EXPECT_NEAR(DiscretePolicy::entropy(logits), h, 1e-14);
}

TEST(DiscretePolicy, GradientsMatchFiniteDifferences) {
  const Eigen::Vector4d logits(0.3, -1.2, 0.8, 0.1);
  for (Eigen::Index a = 0; a < 4; ++a) {
    const Eigen::VectorXd numeric = numeric_gradient(
        [a](const Eigen::VectorXd& l) { return DiscretePolicy::log_prob(l, a); }, logits);
    EXPECT_LT((DiscretePolicy::log_prob_gradient(logits, a) - numeric).norm(), 1e-8);
  }
  const Eigen::VectorXd numeric =
      numeric_gradient([](const Eigen::VectorXd& l) { return DiscretePolicy::entropy(l); }, logits);
  EXPECT_LT((DiscretePolicy::entropy_gradient(logits) - numeric).norm(), 1e-8);
}

TEST(DiscretePolicy, SamplingFollowsSoftmaxAndIsReproducible) {
  const Eigen::Vector3d logits(0.0, 1.0, -1.0);
  const Eigen::VectorXd p = DiscretePolicy::probabilities(logits);
  std::mt19937_64 rng(5);
  const int draws = 40000;
  Eigen::Vector3d counts = Eigen::Vector3d::Zero();
  for (int i = 0; i < draws; ++i) counts[DiscretePolicy::sample(logits, rng)] += 1.0;
  for (int i = 0; i < 3; ++i) {
    // Binomial standard error is below 0.0025; allow 4 of them.
    EXPECT_NEAR(counts[i] / draws, p[i], 0.01) << "action " << i;
  }
  std::mt19937_64 a(77);
  std::mt19937_64 b(77);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(DiscretePolicy::sample(logits, a), DiscretePolicy::sample(logits, b));
  }
  // A (numerically) certain action is always drawn.
  std::mt19937_64 c(1);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(DiscretePolicy::sample(Eigen::Vector3d(-1e9, 0.0, -1e9), c), 1);
  }
}

ActionBounds bounds2() { return {Eigen::Vector2d(-1.0, 0.0), Eigen::Vector2d(1.0, 2.0)}; }

TEST(ContinuousPolicy, DeterministicClipsToBounds) {
  const ContinuousPolicy policy(bounds2());
  EXPECT_EQ(policy.deterministic(Eigen::Vector2d(0.5, 3.0)), Eigen::Vector2d(0.5, 2.0));
  EXPECT_EQ(policy.deterministic(Eigen::Vector2d(-4.0, -0.1)), Eigen::Vector2d(-1.0, 0.0));
  EXPECT_EQ(policy.deterministic(Eigen::Vector2d(0.25, 1.5)), Eigen::Vector2d(0.25, 1.5));
  EXPECT_EQ(clip_action(Eigen::Vector2d(2.0, 1.0), bounds2()), Eigen::Vector2d(1.0, 1.0));
  EXPECT_THROW(policy.deterministic(Eigen::Vector3d::Zero()), std::invalid_argument);
  EXPECT_THROW(ContinuousPolicy({Eigen::Vector2d(1.0, 0.0), Eigen::Vector2d(0.0, 1.0)}),
               std::invalid_argument);
  EXPECT_THROW(ContinuousPolicy(bounds2(), Eigen::Vector3d::Zero()), std::invalid_argument);
}

TEST(ContinuousPolicy, GaussianLogProbEntropyAndGradients) {
  const Eigen::Vector2d log_std(-0.5, 0.3);
  const ContinuousPolicy policy(bounds2(), log_std);
  const Eigen::Vector2d mean(0.2, 1.0);
  const Eigen::Vector2d action(0.7, 0.4);

  double expected = 0.0;
  for (int i = 0; i < 2; ++i) {
    const double s = std::exp(log_std[i]);
    const double d = action[i] - mean[i];
    expected += -d * d / (2 * s * s) - std::log(s) - 0.5 * std::log(2 * std::numbers::pi);
  }
  EXPECT_NEAR(policy.log_prob(mean, action), expected, 1e-14);
  EXPECT_NEAR(policy.entropy(), log_std.sum() + 2 * 0.5 * (1 + std::log(2 * std::numbers::pi)),
              1e-14);

  const Eigen::VectorXd numeric_mean =
      numeric_gradient([&](const Eigen::VectorXd& m) { return policy.log_prob(m, action); }, mean);
  EXPECT_LT((policy.log_prob_gradient_mean(mean, action) - numeric_mean).norm(), 1e-8);
  const Eigen::VectorXd numeric_log_std = numeric_gradient(
      [&](const Eigen::VectorXd& ls) {
        return ContinuousPolicy(bounds2(), ls).log_prob(mean, action);
      },
      log_std);
  EXPECT_LT((policy.log_prob_gradient_log_std(mean, action) - numeric_log_std).norm(), 1e-8);
}

TEST(ContinuousPolicy, SamplingHasTheRightMomentsAndIsNotClipped) {
  const Eigen::Vector2d log_std(std::log(0.5), std::log(2.0));
  const ContinuousPolicy policy(bounds2(), log_std);
  const Eigen::Vector2d mean(0.9, 1.0);
  std::mt19937_64 rng(3);
  const int draws = 40000;
  Eigen::Vector2d sum = Eigen::Vector2d::Zero();
  Eigen::Vector2d sumsq = Eigen::Vector2d::Zero();
  bool outside = false;
  for (int i = 0; i < draws; ++i) {
    const Eigen::VectorXd a = policy.sample(mean, rng);
    sum += a;
    sumsq += a.cwiseProduct(a);
    outside = outside || a[0] > 1.0 || a[1] > 2.0;
  }
  const Eigen::Vector2d m = sum / draws;
  const Eigen::Vector2d var = sumsq / draws - m.cwiseProduct(m);
  EXPECT_NEAR(m[0], 0.9, 0.02);
  EXPECT_NEAR(m[1], 1.0, 0.05);
  EXPECT_NEAR(std::sqrt(var[0]), 0.5, 0.02);
  EXPECT_NEAR(std::sqrt(var[1]), 2.0, 0.05);
  EXPECT_TRUE(outside);
}

TEST(Act, DeterministicActionsFromTheNetwork) {
  // A linear network (sizes {2, 3}) whose output is W x + b with W = I-like, so logits are known.
  Mlp mlp({2, 3});
  mlp.weights(0) << 1.0, 0.0,  //
      0.0, 1.0,                //
      1.0, 1.0;
  mlp.bias(0) << 0.0, 0.0, -10.0;
  const Eigen::Vector2d obs(0.5, 2.0);  // logits (0.5, 2.0, -7.5)
  EXPECT_EQ(act_discrete(mlp, obs), 1);
  const Eigen::VectorXd discrete = act(mlp, obs, ActionKind::kDiscrete);
  ASSERT_EQ(discrete.size(), 1);
  EXPECT_EQ(discrete[0], 1.0);

  const ActionBounds bounds{Eigen::Vector3d(-1.0, -1.0, -1.0), Eigen::Vector3d(1.0, 1.0, 1.0)};
  EXPECT_EQ(act(mlp, obs, ActionKind::kContinuous, bounds), Eigen::Vector3d(0.5, 1.0, -1.0));
  EXPECT_EQ(act_continuous(mlp, obs, bounds), Eigen::Vector3d(0.5, 1.0, -1.0));
  EXPECT_THROW(act(mlp, obs, ActionKind::kContinuous, {}), std::invalid_argument);

  // Squashed: low + (tanh(out) + 1) / 2 * (high - low), here on [0, 4] x [-2, 2] x [-1, 3].
  const ActionBounds wide{Eigen::Vector3d(0.0, -2.0, -1.0), Eigen::Vector3d(4.0, 2.0, 3.0)};
  const Eigen::VectorXd squashed = act(mlp, obs, ActionKind::kSquashed, wide);
  ASSERT_EQ(squashed.size(), 3);
  EXPECT_DOUBLE_EQ(squashed[0], 2.0 * (std::tanh(0.5) + 1.0));
  EXPECT_DOUBLE_EQ(squashed[1], 2.0 * std::tanh(2.0));
  EXPECT_NEAR(squashed[2], -1.0, 1e-5);  // tanh(-7.5): the bound, almost
  EXPECT_GT(squashed[2], -1.0);
  EXPECT_THROW(act_squashed(mlp, obs, ActionBounds{Eigen::Vector2d(0, 0), Eigen::Vector2d(1, 1)}),
               std::invalid_argument);
}

}  // namespace
}  // namespace fiber::rl
