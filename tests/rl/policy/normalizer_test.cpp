// RunningNormalizer: OpenAI-ES's RunningStat statistics, merging, the std floor, clipping,
// checkpoint state and serialization.
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>

#include "policy/normalizer.hpp"

namespace fiber::rl {
namespace {

// 3-dimensional observations with different means and scales, one per column.
Eigen::MatrixXd random_observations(Eigen::Index count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd obs(3, count);
  for (Eigen::Index n = 0; n < count; ++n) {
    obs(0, n) = 10.0 + 3.0 * normal(rng);
    obs(1, n) = -2.0 + 0.5 * normal(rng);
    obs(2, n) = 0.01 * normal(rng);  // variance 1e-4: below the floor
  }
  return obs;
}

TEST(RunningNormalizer, MeanAndStdMatchDirectComputation) {
  const Eigen::MatrixXd obs = random_observations(1000, 1);
  RunningNormalizer stat(3, 0.0);
  for (Eigen::Index n = 0; n < obs.cols(); ++n) stat.observe(Eigen::VectorXd(obs.col(n)));
  EXPECT_EQ(stat.count(), 1000.0);

  for (Eigen::Index i = 0; i < 3; ++i) {
    double mean = 0.0;
    for (Eigen::Index n = 0; n < obs.cols(); ++n) mean += obs(i, n);
    mean /= 1000.0;
    double var = 0.0;
    for (Eigen::Index n = 0; n < obs.cols(); ++n) var += (obs(i, n) - mean) * (obs(i, n) - mean);
    var /= 1000.0;  // population variance, as sumsq / count - mean^2
    EXPECT_NEAR(stat.mean()[i], mean, 1e-12 * std::max(1.0, std::abs(mean)));
    EXPECT_NEAR(stat.std()[i], std::sqrt(std::max(var, 1e-2)), 1e-9);
  }
  EXPECT_GT(stat.std()[0], 2.5);
  EXPECT_DOUBLE_EQ(stat.std()[2], 0.1);  // floored
}

TEST(RunningNormalizer, EpsStartsTheStatisticsAsOpenAiEs) {
  RunningNormalizer stat(2);  // eps = 1e-2
  EXPECT_EQ(stat.count(), 1e-2);
  EXPECT_EQ(stat.sum(), Eigen::Vector2d::Zero());
  EXPECT_EQ(stat.sumsq(), Eigen::Vector2d::Constant(1e-2));
  EXPECT_EQ(stat.mean(), Eigen::Vector2d::Zero());
  EXPECT_DOUBLE_EQ(stat.std()[0], 1.0);  // sqrt(max(eps / eps - 0, 1e-2))
  stat.observe(Eigen::Vector2d(2.0, -4.0));
  EXPECT_DOUBLE_EQ(stat.mean()[0], 2.0 / 1.01);
  EXPECT_DOUBLE_EQ(stat.mean()[1], -4.0 / 1.01);
  const double var0 = (1e-2 + 4.0) / 1.01 - (2.0 / 1.01) * (2.0 / 1.01);
  EXPECT_NEAR(stat.std()[0], std::sqrt(var0), 1e-12);

  const RunningNormalizer empty(2, 0.0);
  EXPECT_EQ(empty.mean(), Eigen::Vector2d::Zero());
  EXPECT_EQ(empty.std(), Eigen::Vector2d::Ones());
  EXPECT_THROW(RunningNormalizer(-1), std::invalid_argument);
  EXPECT_THROW(RunningNormalizer(2, -1.0), std::invalid_argument);
}

TEST(RunningNormalizer, MergingPartialStatisticsEqualsComputingOnAll) {
  const Eigen::MatrixXd obs = random_observations(500, 2);
  RunningNormalizer first(3, 0.0);
  RunningNormalizer second(3, 0.0);
  first.observe_batch(obs.leftCols(180));
  second.observe_batch(obs.rightCols(320));

  RunningNormalizer master(3);  // eps = 1e-2 on the master, as OpenAI-ES
  master.increment(first);
  master.increment(second.sum(), second.sumsq(), second.count());

  RunningNormalizer all(3);
  for (Eigen::Index n = 0; n < obs.cols(); ++n) all.observe(Eigen::VectorXd(obs.col(n)));

  EXPECT_DOUBLE_EQ(master.count(), all.count());
  EXPECT_LT((master.sum() - all.sum()).norm(), 1e-10 * all.sum().norm());
  EXPECT_LT((master.sumsq() - all.sumsq()).norm(), 1e-10 * all.sumsq().norm());
  EXPECT_LT((master.mean() - all.mean()).norm(), 1e-12);
  EXPECT_LT((master.std() - all.std()).norm(), 1e-12);

  // observe_batch is observe() column by column.
  RunningNormalizer batch(3);
  batch.observe_batch(obs);
  EXPECT_DOUBLE_EQ(batch.count(), all.count());
  EXPECT_LT((batch.mean() - all.mean()).norm(), 1e-12);
  EXPECT_LT((batch.std() - all.std()).norm(), 1e-12);

  EXPECT_THROW(master.increment(Eigen::Vector2d::Zero(), Eigen::Vector3d::Zero(), 1.0),
               std::invalid_argument);
  EXPECT_THROW(master.increment(Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), -1.0),
               std::invalid_argument);
  EXPECT_THROW(master.observe(Eigen::Vector2d::Zero()), std::invalid_argument);
  EXPECT_THROW(master.observe_batch(Eigen::MatrixXd::Zero(2, 4)), std::invalid_argument);
}

TEST(RunningNormalizer, StdFloorForConstantObservations) {
  RunningNormalizer stat(2, 0.0);
  for (int i = 0; i < 50; ++i) stat.observe(Eigen::Vector2d(3.0, -7.0));
  EXPECT_DOUBLE_EQ(stat.mean()[0], 3.0);
  EXPECT_DOUBLE_EQ(stat.std()[0], 0.1);
  EXPECT_DOUBLE_EQ(stat.std()[1], 0.1);
  // (3.5 - 3) / 0.1 = 5, (-7.2 + 7) / 0.1 = -2.
  const Eigen::VectorXd z = stat.normalize(Eigen::Vector2d(3.5, -7.2));
  EXPECT_NEAR(z[0], 5.0, 1e-12);
  EXPECT_NEAR(z[1], -2.0, 1e-12);
}

TEST(RunningNormalizer, NormalizeClipsToFive) {
  RunningNormalizer stat(3);
  stat.set_from_init(Eigen::Vector3d(0.0, 1.0, 0.0), Eigen::Vector3d(1.0, 2.0, 1.0), 100.0);
  EXPECT_DOUBLE_EQ(stat.count(), 100.0);
  EXPECT_NEAR(stat.mean()[1], 1.0, 1e-15);
  EXPECT_NEAR(stat.std()[1], 2.0, 1e-14);
  const Eigen::VectorXd z = stat.normalize(Eigen::Vector3d(10.0, -20.0, 2.5));
  EXPECT_EQ(z[0], 5.0);
  EXPECT_EQ(z[1], -5.0);
  EXPECT_NEAR(z[2], 2.5, 1e-14);
  const Eigen::VectorXd z1 = stat.normalize(Eigen::Vector3d(10.0, -20.0, 2.5), 1.0);
  EXPECT_EQ(z1, Eigen::Vector3d(1.0, -1.0, 1.0));
  // The free function with the master's mean and std gives the same.
  EXPECT_EQ(normalize_observation(Eigen::Vector3d(10.0, -20.0, 2.5), stat.mean(), stat.std()), z);
  EXPECT_THROW(normalize_observation(Eigen::Vector3d::Zero(), Eigen::Vector2d::Zero(),
                                     Eigen::Vector3d::Ones()),
               std::invalid_argument);
}

TEST(RunningNormalizer, StateAndSerializationRestoreExactly) {
  RunningNormalizer stat(3);
  stat.observe_batch(random_observations(77, 3));

  const RunningNormalizer::State state = stat.state();
  ASSERT_EQ(state.sum.size(), 3u);
  EXPECT_EQ(state.sum[1], stat.sum()[1]);
  EXPECT_EQ(state.sumsq[2], stat.sumsq()[2]);
  EXPECT_EQ(state.count, stat.count());
  RunningNormalizer restored;
  restored.set_state(state);
  EXPECT_TRUE(restored == stat);
  EXPECT_EQ(restored.std(), stat.std());

  std::stringstream stream;
  {
    boost::archive::binary_oarchive out(stream);
    out << stat;
  }
  RunningNormalizer loaded;
  {
    boost::archive::binary_iarchive in(stream);
    in >> loaded;
  }
  EXPECT_TRUE(loaded == stat);
  EXPECT_EQ(loaded.normalize(Eigen::Vector3d(1.0, 2.0, 3.0)),
            stat.normalize(Eigen::Vector3d(1.0, 2.0, 3.0)));

  RunningNormalizer::State bad = state;
  bad.sumsq.pop_back();
  EXPECT_THROW(restored.set_state(bad), std::invalid_argument);
}

}  // namespace
}  // namespace fiber::rl
