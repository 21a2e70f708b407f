// Centered ranks as OpenAI-ES's compute_centered_ranks (numpy argsort, ties by index).
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "policy/ranks.hpp"

namespace fiber::rl {
namespace {

TEST(Ranks, SmallExample) {
  const Eigen::Vector4d x(3.0, 1.0, 2.0, -5.0);
  EXPECT_EQ(ranks(x), Eigen::Vector4d(3.0, 1.0, 2.0, 0.0));
  // ranks / 3 - 0.5
  const Eigen::VectorXd c = centered_ranks(x);
  EXPECT_DOUBLE_EQ(c[0], 0.5);
  EXPECT_DOUBLE_EQ(c[1], 1.0 / 3.0 - 0.5);
  EXPECT_DOUBLE_EQ(c[2], 2.0 / 3.0 - 0.5);
  EXPECT_DOUBLE_EQ(c[3], -0.5);
}

TEST(Ranks, TiesFollowIndexOrderAsNumpyArgsort) {
  // numpy: np.array([1, 2, 1, 2, 0]).argsort() = [4, 0, 2, 1, 3] -> ranks [1, 3, 2, 4, 0].
  Eigen::VectorXd x(5);
  x << 1.0, 2.0, 1.0, 2.0, 0.0;
  Eigen::VectorXd expected(5);
  expected << 1.0, 3.0, 2.0, 4.0, 0.0;
  EXPECT_EQ(ranks(x), expected);
  EXPECT_EQ(centered_ranks(x), ((expected / 4.0).array() - 0.5).matrix());

  // All equal: ranks are the indices.
  EXPECT_EQ(ranks(Eigen::VectorXd::Constant(4, 7.0)), Eigen::Vector4d(0.0, 1.0, 2.0, 3.0));
}

TEST(Ranks, NanRanksLastAndDegenerateSizes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ranks(Eigen::Vector3d(nan, 1.0, -1.0)), Eigen::Vector3d(2.0, 1.0, 0.0));
  EXPECT_EQ(centered_ranks(Eigen::VectorXd::Constant(1, 4.0)), Eigen::VectorXd::Zero(1));
  EXPECT_EQ(centered_ranks(Eigen::VectorXd()).size(), 0);
}

TEST(Ranks, CenteredRanksSumToZeroAndSpanTheRange) {
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal(0.0, 100.0);
  Eigen::VectorXd x(1001);
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = normal(rng);
  const Eigen::VectorXd c = centered_ranks(x);
  EXPECT_NEAR(c.sum(), 0.0, 1e-10);
  EXPECT_DOUBLE_EQ(c.minCoeff(), -0.5);
  EXPECT_DOUBLE_EQ(c.maxCoeff(), 0.5);
  // Monotone in x.
  for (Eigen::Index i = 0; i + 1 < x.size(); ++i) EXPECT_EQ(x[i] < x[i + 1], c[i] < c[i + 1]);
}

TEST(Ranks, AntitheticPairsAreRankedOverTheRowMajorFlattening) {
  // returns_n2 = [[1, 5], [3, 3], [0, 2]]; ravel() = [1, 5, 3, 3, 0, 2];
  // argsort = [4, 0, 5, 2, 3, 1] -> ranks [1, 5, 3, 4, 0, 2] (the tie 3, 3: row 1 column 0 first).
  Eigen::MatrixXd returns(3, 2);
  returns << 1.0, 5.0,  //
      3.0, 3.0,         //
      0.0, 2.0;
  Eigen::MatrixXd expected_ranks(3, 2);
  expected_ranks << 1.0, 5.0,  //
      3.0, 4.0,                //
      0.0, 2.0;
  const Eigen::MatrixXd c = centered_ranks_matrix(returns);
  ASSERT_EQ(c.rows(), 3);
  ASSERT_EQ(c.cols(), 2);
  for (Eigen::Index i = 0; i < 3; ++i) {
    for (Eigen::Index j = 0; j < 2; ++j) {
      EXPECT_DOUBLE_EQ(c(i, j), expected_ranks(i, j) / 5.0 - 0.5) << i << ", " << j;
    }
  }
  EXPECT_NEAR(c.sum(), 0.0, 1e-15);

  // Weights of the noise vectors: column 0 - column 1.
  const Eigen::VectorXd w = antithetic_weights(c);
  ASSERT_EQ(w.size(), 3);
  EXPECT_DOUBLE_EQ(w[0], (1.0 - 5.0) / 5.0);
  EXPECT_DOUBLE_EQ(w[1], (3.0 - 4.0) / 5.0);
  EXPECT_DOUBLE_EQ(w[2], (0.0 - 2.0) / 5.0);
  EXPECT_THROW(antithetic_weights(Eigen::MatrixXd::Zero(3, 3)), std::invalid_argument);
}

}  // namespace
}  // namespace fiber::rl
