// Adam: steps against values worked out by hand and against the formula written out per
// coordinate, the sign convention, and bit-identical continuation after a state restore.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>

#include "policy/adam.hpp"

namespace fiber::rl {
namespace {

bool bit_identical(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

Eigen::VectorXd random_gradient(Eigen::Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd g(n);
  for (Eigen::Index i = 0; i < n; ++i) g[i] = normal(rng);
  return g;
}

TEST(Adam, ThreeStepsByHand) {
  // stepsize 0.1, beta1 0.9, beta2 0.999, eps 1e-8; theta = (1, -1);
  // gradients g1 = (1, -2), g2 = (0.5, 0.5), g3 = (-1, 3).
  Adam adam(2, 0.1);
  Eigen::VectorXd theta(2);
  theta << 1.0, -1.0;

  // t = 1: m = 0.1 g1 = (0.1, -0.2), v = 0.001 g1^2 = (0.001, 0.004),
  // a = 0.1 * sqrt(1 - 0.999) / (1 - 0.9) = sqrt(0.001),
  // step = -a m / (sqrt(v) + eps) = -0.1 * sign(g1) * sqrt(0.001)|g1| / (sqrt(0.001)|g1| + 1e-8).
  const double r = std::sqrt(0.001);
  const double expected_step0 = -0.1 * r / (r + 1e-8);
  const double expected_step1 = 0.1 * 2 * r / (2 * r + 1e-8);
  adam.update(theta, Eigen::Vector2d(1.0, -2.0));
  EXPECT_EQ(adam.t(), 1u);
  EXPECT_NEAR(adam.m()[0], 0.1, 1e-16);
  EXPECT_NEAR(adam.m()[1], -0.2, 1e-16);
  EXPECT_NEAR(adam.v()[0], 0.001, 1e-17);
  EXPECT_NEAR(adam.v()[1], 0.004, 1e-17);
  EXPECT_NEAR(theta[0], 1.0 + expected_step0, 1e-15);
  EXPECT_NEAR(theta[1], -1.0 + expected_step1, 1e-15);
  EXPECT_NEAR(theta[0], 0.9000000316227666, 1e-15);  // decimal values from the same formula
  EXPECT_NEAR(theta[1], -0.9000000158113858, 1e-15);

  // t = 2: m = 0.9 (0.1, -0.2) + 0.1 (0.5, 0.5) = (0.14, -0.13),
  // v = 0.999 (0.001, 0.004) + 0.001 (0.25, 0.25) = (0.001249, 0.004246),
  // a = 0.1 sqrt(1 - 0.999^2) / (1 - 0.9^2).
  adam.update(theta, Eigen::Vector2d(0.5, 0.5));
  EXPECT_NEAR(adam.m()[0], 0.14, 1e-15);
  EXPECT_NEAR(adam.m()[1], -0.13, 1e-15);
  EXPECT_NEAR(adam.v()[0], 0.001249, 1e-17);
  EXPECT_NEAR(adam.v()[1], 0.004246, 1e-17);
  const double a2 = 0.1 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
  EXPECT_NEAR(theta[0], 0.9000000316227666 - a2 * 0.14 / (std::sqrt(0.001249) + 1e-8), 1e-15);
  EXPECT_NEAR(theta[0], 0.8067820941181935, 1e-15);
  EXPECT_NEAR(theta[1], -0.8530532058953002, 1e-15);

  // t = 3.
  const double ratio = adam.update(theta, Eigen::Vector2d(-1.0, 3.0));
  EXPECT_NEAR(adam.m()[0], 0.026, 1e-15);
  EXPECT_NEAR(adam.m()[1], 0.183, 1e-15);
  EXPECT_NEAR(theta[0], 0.7957037893226626, 1e-15);
  EXPECT_NEAR(theta[1], -0.8851788946400583, 1e-15);
  // Update ratio = |step| / |theta before|.
  const double step_norm = std::hypot(-0.011078304795530826, -0.032125688744758095);
  EXPECT_NEAR(ratio, step_norm / std::hypot(0.8067820941181935, -0.8530532058953002), 1e-12);
}

// OpenAI-ES's Adam written out coordinate by coordinate.
struct ReferenceAdam {
  double stepsize, beta1, beta2, epsilon;
  std::vector<double> m, v;
  int t = 0;

  void update(std::vector<double>& theta, const Eigen::VectorXd& g) {
    ++t;
    const double a = stepsize * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t));
    for (std::size_t i = 0; i < theta.size(); ++i) {
      const double gi = g[static_cast<Eigen::Index>(i)];
      m[i] = beta1 * m[i] + (1.0 - beta1) * gi;
      v[i] = beta2 * v[i] + (1.0 - beta2) * gi * gi;
      theta[i] += -a * m[i] / (std::sqrt(v[i]) + epsilon);
    }
  }
};

TEST(Adam, MatchesTheFormulaOverManySteps) {
  const Eigen::Index n = 7;
  Adam adam(n, 0.01, 0.8, 0.99, 1e-6);
  EXPECT_EQ(adam.beta1(), 0.8);
  EXPECT_EQ(adam.beta2(), 0.99);
  EXPECT_EQ(adam.epsilon(), 1e-6);
  ReferenceAdam reference{0.01, 0.8, 0.99, 1e-6, std::vector<double>(n), std::vector<double>(n)};
  Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(n, -1.0, 1.0);
  std::vector<double> reference_theta(theta.data(), theta.data() + n);
  std::mt19937_64 rng(9);
  for (int step = 0; step < 50; ++step) {
    const Eigen::VectorXd g = random_gradient(n, rng);
    adam.update(theta, g);
    reference.update(reference_theta, g);
  }
  EXPECT_EQ(adam.t(), 50u);
  for (Eigen::Index i = 0; i < n; ++i) {
    EXPECT_NEAR(theta[i], reference_theta[static_cast<std::size_t>(i)], 1e-14);
  }
}

TEST(Adam, SignConventionMinimizes) {
  // Minimize f(x) = sum (x - target)^2 by passing its gradient 2 (x - target).
  const Eigen::Vector3d target(3.0, -1.0, 0.5);
  Adam adam(3, 0.05);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(3);
  for (int i = 0; i < 2000; ++i) adam.update(x, 2.0 * (x - target));
  EXPECT_LT((x - target).norm(), 1e-3);

  // ES: maximize the return by passing -g (+ l2coeff * theta): the step follows +g.
  Adam es(2, 0.01);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(2);
  const Eigen::Vector2d g(1.0, -1.0);  // gradient of the return
  es.update(theta, -g + 0.005 * theta);
  EXPECT_GT(theta[0], 0.0);
  EXPECT_LT(theta[1], 0.0);

  // compute_step returns the step without applying it.
  Adam plain(2, 0.01);
  const Eigen::VectorXd step = plain.compute_step(g);
  EXPECT_LT(step[0], 0.0);
  EXPECT_GT(step[1], 0.0);
  EXPECT_EQ(plain.t(), 1u);
}

TEST(Adam, StateRestoreContinuesBitIdentically) {
  const Eigen::Index n = 33;
  std::mt19937_64 rng(4);
  std::vector<Eigen::VectorXd> gradients;
  for (int i = 0; i < 20; ++i) gradients.push_back(random_gradient(n, rng));

  Adam original(n, 0.01);
  Eigen::VectorXd theta = Eigen::VectorXd::Constant(n, 0.3);
  for (int i = 0; i < 10; ++i) original.update(theta, gradients[static_cast<std::size_t>(i)]);

  // Checkpoint: plain state and theta, and a Boost archive.
  const Adam::State state = original.state();
  ASSERT_EQ(state.m.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(state.t, 10u);
  const Eigen::VectorXd theta_checkpoint = theta;
  std::stringstream stream;
  {
    boost::archive::binary_oarchive out(stream);
    out << original;
  }

  for (int i = 10; i < 20; ++i) original.update(theta, gradients[static_cast<std::size_t>(i)]);

  Adam from_state(n, 0.01);
  from_state.set_state(state);
  Eigen::VectorXd theta_a = theta_checkpoint;
  for (int i = 10; i < 20; ++i) from_state.update(theta_a, gradients[static_cast<std::size_t>(i)]);
  EXPECT_TRUE(bit_identical(theta_a, theta));
  EXPECT_TRUE(bit_identical(from_state.m(), original.m()));
  EXPECT_TRUE(bit_identical(from_state.v(), original.v()));
  EXPECT_EQ(from_state.t(), original.t());

  Adam from_archive;
  {
    boost::archive::binary_iarchive in(stream);
    in >> from_archive;
  }
  EXPECT_EQ(from_archive.stepsize(), 0.01);
  Eigen::VectorXd theta_b = theta_checkpoint;
  for (int i = 10; i < 20; ++i) {
    from_archive.update(theta_b, gradients[static_cast<std::size_t>(i)]);
  }
  EXPECT_TRUE(bit_identical(theta_b, theta));
  EXPECT_TRUE(bit_identical(from_archive.v(), original.v()));
}

TEST(Adam, ChecksSizesAndHyperparameters) {
  Adam adam(3, 0.1);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(3);
  EXPECT_THROW(adam.update(theta, Eigen::Vector2d::Zero()), std::invalid_argument);
  Eigen::VectorXd wrong = Eigen::VectorXd::Zero(4);
  EXPECT_THROW(adam.update(wrong, Eigen::Vector3d::Zero()), std::invalid_argument);
  EXPECT_EQ(adam.t(), 0u);  // failed calls change nothing
  EXPECT_EQ(adam.update(theta, Eigen::Vector3d(1.0, 1.0, 1.0)), 0.0);  // ratio 0 for theta = 0
  EXPECT_THROW(adam.set_state({{1.0}, {1.0}, 1}), std::invalid_argument);
  EXPECT_THROW(Adam(3, -0.1), std::invalid_argument);
  EXPECT_THROW(Adam(3, 0.1, 1.0), std::invalid_argument);
  EXPECT_THROW(Adam(3, 0.1, 0.9, -0.1), std::invalid_argument);
  EXPECT_THROW(Adam(-3, 0.1), std::invalid_argument);
  adam.set_stepsize(0.5);
  EXPECT_EQ(adam.stepsize(), 0.5);
}

}  // namespace
}  // namespace fiber::rl
