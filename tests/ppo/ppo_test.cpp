// fiber-ppo's parts without MPI: the PPO loss's gradient against central finite differences for
// every parameter (each layer of both networks, log_std) with both heads; GAE against a hand
// computation; gradient clipping; the update on several threads (bit-identical to one);
// environment states that travel between workers.
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "actor_critic.hpp"
#include "environment_state.hpp"
#include "envs/environment.hpp"
#include "gae.hpp"
#include "learner.hpp"
#include "part_threads.hpp"
#include "return_scaler.hpp"

namespace fiber::ppo {
namespace {

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng,
                              double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = normal(rng);
  return m;
}

// A batch sampled from the model itself, with old log probabilities moved away from the new
// ones so that some ratios fall outside the clip range (and none sits on its edge).
Batch make_batch(const ActorCritic& model, Eigen::Index n, std::mt19937_64& rng) {
  Batch batch;
  batch.observations = random_matrix(model.policy().input_size(), n, rng);
  batch.actions.resize(model.discrete() ? 1 : model.policy().output_size(), n);
  batch.old_log_probs.resize(n);
  for (Eigen::Index b = 0; b < n; ++b) {
    double log_prob = 0;
    batch.actions.col(b) = model.sample(batch.observations.col(b), rng, log_prob);
    const double shift = (b % 3 == 0 ? 0.5 : 0.05) * (b % 2 == 0 ? 1 : -1);
    batch.old_log_probs[b] = log_prob + shift;
  }
  batch.advantages = random_matrix(n, 1, rng);
  batch.returns = random_matrix(n, 1, rng, 2.0);
  return batch;
}

void expect_gradient_matches_finite_differences(const ActorCritic& original, const Batch& batch) {
  const LossCoefficients coefficients{.clip = 0.2, .value = 0.7, .entropy = 0.05};
  ActorCritic model = original;
  Eigen::VectorXd analytic;
  const LossTerms terms = model.loss(batch, coefficients, &analytic);
  ASSERT_GT(terms.clip_fraction, 0.0);  // both branches of the clipped objective are exercised
  ASSERT_LT(terms.clip_fraction, 1.0);
  const Eigen::VectorXd theta = model.parameters();
  ASSERT_EQ(analytic.size(), theta.size());
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < theta.size(); ++i) {
    Eigen::VectorXd plus = theta, minus = theta;
    plus[i] += h;
    minus[i] -= h;
    model.set_parameters(plus);
    const double up = model.loss(batch, coefficients, nullptr).total;
    model.set_parameters(minus);
    const double down = model.loss(batch, coefficients, nullptr).total;
    const double numeric = (up - down) / (2 * h);
    EXPECT_NEAR(analytic[i], numeric, 1e-6 + 1e-5 * std::abs(numeric)) << "parameter " << i;
  }
}

TEST(PpoLoss, CategoricalGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(7);
  const ActorCritic model(4, {6, 5}, true, 3, 0.0, 11);
  expect_gradient_matches_finite_differences(model, make_batch(model, 24, rng));
}

TEST(PpoLoss, GaussianGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(8);
  ActorCritic model(3, {5, 4}, false, 2, -0.3, 12);
  Eigen::VectorXd theta = model.parameters();
  theta.segment(model.policy().parameter_count(), 2) << -0.2, 0.4;  // unequal log stds
  model.set_parameters(theta);
  expect_gradient_matches_finite_differences(model, make_batch(model, 24, rng));
}

TEST(PpoLoss, SampledLogProbabilitiesAreTheLossOnes) {
  std::mt19937_64 rng(9);
  for (bool discrete : {true, false}) {
    const ActorCritic model(4, {8}, discrete, 2, -0.5, 13);
    Batch batch = make_batch(model, 16, rng);
    for (Eigen::Index b = 0; b < 16; ++b) {
      double log_prob = 0;
      batch.actions.col(b) = model.sample(batch.observations.col(b), rng, log_prob);
      batch.old_log_probs[b] = log_prob;
    }
    const LossTerms terms = model.loss(batch, {}, nullptr);
    EXPECT_NEAR(terms.approx_kl, 0.0, 1e-12);
    EXPECT_EQ(terms.clip_fraction, 0.0);
    EXPECT_NEAR(terms.policy, -batch.advantages.mean(), 1e-12);  // ratio 1 everywhere
  }
}

TEST(PpoLoss, GaussianEntropyAndParameterLayout) {
  ActorCritic model(3, {4}, false, 2, -0.5, 1);
  EXPECT_EQ(model.parameter_count(), (3 + 1) * 4 + (4 + 1) * 2 + 2 + (3 + 1) * 4 + (4 + 1) * 1);
  Batch batch;
  std::mt19937_64 rng(1);
  batch = make_batch(model, 4, rng);
  const double expected = 2 * (-0.5 + 0.5 + 0.5 * std::log(2 * M_PI));
  EXPECT_NEAR(model.loss(batch, {}, nullptr).entropy, expected, 1e-12);
  EXPECT_THROW(model.set_parameters(Eigen::VectorXd::Zero(3)), std::invalid_argument);
}

TEST(Gae, MatchesHandComputation) {
  // gamma 0.9, lambda 0.8; the episode ends after step 1, step 2 continues (last value 2).
  const std::vector<double> rewards{1, 2, 3}, values{0.5, 1.0, 1.5};
  const std::vector<unsigned char> ended{0, 1, 0};
  const auto advantages = gae_advantages(rewards, values, ended, 2.0, 0.9, 0.8);
  ASSERT_EQ(advantages.size(), 3u);
  EXPECT_NEAR(advantages[2], 3 + 0.9 * 2.0 - 1.5, 1e-12);                      // 3.3
  EXPECT_NEAR(advantages[1], 2 - 1.0, 1e-12);                                  // 1.0, no bootstrap
  EXPECT_NEAR(advantages[0], (1 + 0.9 * 1.0 - 0.5) + 0.9 * 0.8 * 1.0, 1e-12);  // 2.12
  // lambda = 1 and no ends: discounted return minus value.
  const std::vector<unsigned char> none_ended{0, 0, 0};
  const auto monte_carlo = gae_advantages(rewards, values, none_ended, 2.0, 0.9, 1.0);
  EXPECT_NEAR(monte_carlo[0], 1 + 0.9 * 2 + 0.81 * 3 + 0.729 * 2 - 0.5, 1e-12);
  const std::vector<double> one_value{0.5};
  EXPECT_THROW(gae_advantages(rewards, one_value, ended, 0, 0.9, 0.8), std::invalid_argument);
}

TEST(Learner, ClipsTheGlobalGradientNorm) {
  Eigen::VectorXd g(2);
  g << 3, 4;
  EXPECT_DOUBLE_EQ(clip_gradient_norm(g, 1.0), 5.0);
  EXPECT_NEAR(g.norm(), 1.0, 1e-6);
  Eigen::VectorXd small(2);
  small << 0.3, 0.4;
  clip_gradient_norm(small, 1.0);
  EXPECT_EQ(small, Eigen::Vector2d(0.3, 0.4));
}

TEST(Learner, UpdateLowersTheLossOnAFixedBatch) {
  std::mt19937_64 rng(3);
  ActorCritic model(4, {16}, true, 2, 0.0, 5);
  const Batch batch = make_batch(model, 64, rng);
  Samples samples{batch.observations, batch.actions, batch.old_log_probs,
                  batch.advantages,   batch.returns, Eigen::VectorXd::Zero(64)};
  const LossCoefficients coefficients;
  const double before = model.loss(batch, coefficients, nullptr).value;
  rl::Adam adam(model.parameter_count(), 1e-2);
  ppo_update(model, adam, samples, {.coefficients = {}, .epochs = 10, .minibatches = 2}, rng);
  EXPECT_LT(model.loss(batch, coefficients, nullptr).value, before);
}

TEST(Learner, PartsOfAMinibatchAddUpToItsLoss) {
  std::mt19937_64 rng(4);
  const ActorCritic model(3, {5, 4}, false, 2, -0.3, 6);
  const Batch batch = make_batch(model, 10, rng);
  const LossCoefficients coefficients{.clip = 0.2, .value = 0.7, .entropy = 0.05};
  Eigen::VectorXd whole_gradient, first_gradient, second_gradient;
  const LossTerms whole = model.loss(batch, coefficients, &whole_gradient);
  auto part = [&](Eigen::Index first, Eigen::Index count) {
    return Batch{batch.observations.middleCols(first, count),
                 batch.actions.middleCols(first, count), batch.old_log_probs.segment(first, count),
                 batch.advantages.segment(first, count), batch.returns.segment(first, count)};
  };
  const LossTerms first = model.loss_share(part(0, 3), 10, coefficients, &first_gradient);
  const LossTerms second = model.loss_share(part(3, 7), 10, coefficients, &second_gradient);
  EXPECT_NEAR(first.total + second.total, whole.total, 1e-12);
  EXPECT_NEAR(first.entropy + second.entropy, whole.entropy, 1e-12);
  EXPECT_NEAR(first.clip_fraction + second.clip_fraction, whole.clip_fraction, 1e-12);
  EXPECT_LT((first_gradient + second_gradient - whole_gradient).lpNorm<Eigen::Infinity>(), 1e-12);
}

TEST(Learner, GradientPartsDependOnTheMinibatchSizeAlone) {
  EXPECT_EQ(gradient_parts(2), 1);
  EXPECT_EQ(gradient_parts(2 * kSamplesPerPart - 1), 1);
  EXPECT_EQ(gradient_parts(2 * kSamplesPerPart), 2);
  EXPECT_EQ(gradient_parts(4 * kSamplesPerPart + 3), 4);
  EXPECT_EQ(gradient_parts(1'000'000), kMaxGradientParts);
}

// fiber-ppo --learner-cores N: the same update on 1, 2 or 3 threads (more than its parts too)
// leaves bit-identical parameters, optimizer state and losses, each thread computing parts.
TEST(Learner, ThreadsGiveBitIdenticalUpdates) {
  std::mt19937_64 data_rng(9);
  const ActorCritic initial(6, {16, 16}, false, 2, 0.0, 7);
  const Eigen::Index n = 8 * kSamplesPerPart;  // 2 minibatches of 4 parts
  const Batch batch = make_batch(initial, n, data_rng);
  const Samples samples{batch.observations, batch.actions, batch.old_log_probs,
                        batch.advantages,   batch.returns, Eigen::VectorXd::Zero(n)};
  struct Outcome {
    Eigen::VectorXd parameters, m, v;
    UpdateReport report;
  };
  auto update_on = [&](int threads) {
    ActorCritic model = initial;
    rl::Adam adam(model.parameter_count(), 1e-2);
    std::mt19937_64 rng(3);
    const UpdateReport report =
        ppo_update(model, adam, samples,
                   {.coefficients = {}, .epochs = 3, .minibatches = 2, .threads = threads}, rng);
    return Outcome{model.parameters(), adam.m(), adam.v(), report};
  };
  const Outcome one = update_on(1);
  EXPECT_EQ(one.report.threads, 1);
  for (int threads : {2, 3, 8}) {
    const Outcome many = update_on(threads);
    EXPECT_EQ(many.report.threads, std::min(threads, 4)) << threads;
    EXPECT_EQ(many.parameters, one.parameters) << threads;
    EXPECT_EQ(many.m, one.m) << threads;
    EXPECT_EQ(many.v, one.v) << threads;
    EXPECT_EQ(many.report.loss.total, one.report.loss.total) << threads;
    EXPECT_EQ(many.report.loss.approx_kl, one.report.loss.approx_kl) << threads;
  }
}

TEST(PartThreads, RunsEveryPartOnceAndRethrowsAPartsError) {
  PartThreads threads(3);
  std::vector<int> runs(7, 0);
  threads.run(7, [&](int p) { ++runs[static_cast<std::size_t>(p)]; });
  EXPECT_EQ(runs, std::vector<int>(7, 1));
  EXPECT_THROW(threads.run(7,
                           [](int p) {
                             if (p == 5) throw std::runtime_error("part 5");
                           }),
               std::runtime_error);
  threads.run(2, [&](int p) { ++runs[static_cast<std::size_t>(p)]; });  // still serves
  EXPECT_EQ(runs[0] + runs[1], 4);
  EXPECT_THROW(PartThreads(0), std::invalid_argument);
}

TEST(ReturnScaler, DividesByTheStdOfDiscountedReturns) {
  ReturnScaler scaler(2, 0.5);
  auto first = scaler.scale({1.0, 3.0}, {0, 1});  // returns 1 and 3: variance ~1
  EXPECT_NEAR(first[1] / first[0], 3.0, 1e-12);
  EXPECT_NEAR(scaler.state().variance, 1.0, 1e-3);
  EXPECT_EQ(scaler.state().returns[1], 0.0);  // that episode ended
  EXPECT_EQ(scaler.state().returns[0], 1.0);
}

// A slot's state restored on another environment object continues bit for bit: every
// environment, the humanoids' MuJoCo state too.
TEST(EnvironmentState, RestoredEnvironmentsContinueIdentically) {
  for (const auto& name : rl::environment_names()) {
    auto original = rl::make_environment(name);
    auto copy = rl::make_environment(name);
    const auto& space = original->action_space();
    std::mt19937_64 rng(4);
    auto action = [&] {
      Eigen::VectorXd a(space.dimension());
      if (space.discrete) {
        a[0] = static_cast<double>(rng() % static_cast<unsigned>(space.size));
      } else {
        for (Eigen::Index i = 0; i < a.size(); ++i) a[i] = static_cast<double>(rng() % 5) - 2;
      }
      return a;
    };
    Eigen::VectorXd observation = original->reset(17);
    for (int t = 0; t < 5; ++t) observation = original->step(action()).observation;
    EXPECT_EQ(copy->reset(0).size(), original->observation_size());
    ASSERT_EQ(restore_state(*copy, capture_state(*original)), observation) << name;
    for (int t = 0; t < 20; ++t) {
      const Eigen::VectorXd a = action();
      const auto x = original->step(a);
      const auto y = copy->step(a);
      ASSERT_EQ(x.observation, y.observation) << name << " step " << t;
      ASSERT_EQ(x.reward, y.reward) << name;
      ASSERT_EQ(x.terminated, y.terminated) << name;
      if (x.terminated) break;
    }
    EXPECT_THROW(restore_state(*copy, {1.0}), std::invalid_argument) << name;
  }
}

}  // namespace
}  // namespace fiber::ppo
