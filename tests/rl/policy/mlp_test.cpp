// Mlp: layout, forward against a hand-computed network, initialization, backpropagation against
// central finite differences, serialization.
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/archive/text_iarchive.hpp>
#include <boost/archive/text_oarchive.hpp>

#include "policy/mlp.hpp"

namespace fiber::rl {
namespace {

Eigen::VectorXd random_vector(Eigen::Index n, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = normal(rng);
  return v;
}

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  return random_vector(rows * cols, seed).reshaped(rows, cols);
}

TEST(Mlp, ParameterCountAndLayout) {
  const Mlp small({3, 4, 2});
  EXPECT_EQ(small.parameter_count(), (3 + 1) * 4 + (4 + 1) * 2);  // 26
  EXPECT_EQ(small.layer_count(), 2u);
  EXPECT_EQ(small.input_size(), 3);
  EXPECT_EQ(small.output_size(), 2);
  EXPECT_EQ(small.layout(0).weight_offset, 0);
  EXPECT_EQ(small.layout(0).bias_offset, 12);
  EXPECT_EQ(small.layout(1).weight_offset, 16);
  EXPECT_EQ(small.layout(1).bias_offset, 24);
  EXPECT_EQ(small.layout(1).inputs, 4);
  EXPECT_EQ(small.layout(1).outputs, 2);

  const Mlp mujoco({17, 64, 64, 6});
  EXPECT_EQ(mujoco.parameter_count(), 18 * 64 + 65 * 64 + 65 * 6);  // 5702
  EXPECT_EQ(Mlp({4, 2}).parameter_count(), 10);                     // linear policy
  EXPECT_THROW(mujoco.layout(3), std::out_of_range);
}

TEST(Mlp, RejectsBadSizes) {
  EXPECT_THROW(Mlp({3}), std::invalid_argument);
  EXPECT_THROW(Mlp(std::vector<Eigen::Index>{}), std::invalid_argument);
  EXPECT_THROW(Mlp({3, 0, 2}), std::invalid_argument);
  EXPECT_THROW(Mlp({-1, 2}), std::invalid_argument);
}

// Sizes {2, 2, 1}: W0 = [[0.5, -1], [2, 0.25]], b0 = [0.1, -0.2], W1 = [1.5, -0.5], b1 = 0.3.
Mlp hand_network() {
  Mlp mlp({2, 2, 1});
  Eigen::VectorXd p(9);
  // W0 column-major (W0(0,0), W0(1,0), W0(0,1), W0(1,1)), b0, W1, b1.
  p << 0.5, 2.0, -1.0, 0.25, 0.1, -0.2, 1.5, -0.5, 0.3;
  mlp.set_parameters(p);
  return mlp;
}

TEST(Mlp, ForwardMatchesHandComputation) {
  const Mlp mlp = hand_network();
  EXPECT_EQ(mlp.weights(0)(0, 1), -1.0);
  EXPECT_EQ(mlp.weights(0)(1, 0), 2.0);
  EXPECT_EQ(mlp.bias(0)(1), -0.2);
  EXPECT_EQ(mlp.weights(1)(0, 1), -0.5);
  EXPECT_EQ(mlp.bias(1)(0), 0.3);

  const double x0 = 1.0;
  const double x1 = 2.0;
  const double h0 = std::tanh(0.5 * x0 - 1.0 * x1 + 0.1);   // tanh(-1.4)
  const double h1 = std::tanh(2.0 * x0 + 0.25 * x1 - 0.2);  // tanh(2.3)
  const double expected = 1.5 * h0 - 0.5 * h1 + 0.3;

  const Eigen::VectorXd y = mlp.forward(Eigen::Vector2d(x0, x1).eval());
  ASSERT_EQ(y.size(), 1);
  EXPECT_NEAR(y[0], expected, 1e-15);
  EXPECT_NEAR(y[0], 1.5 * std::tanh(-1.4) - 0.5 * std::tanh(2.3) + 0.3, 1e-15);

  EXPECT_THROW(mlp.forward(Eigen::VectorXd::Zero(3).eval()), std::invalid_argument);
  EXPECT_THROW(mlp.forward(Eigen::MatrixXd::Zero(3, 4).eval()), std::invalid_argument);
}

TEST(Mlp, ViewsWriteThroughToTheFlatVector) {
  Mlp mlp({3, 4, 2});
  mlp.weights(1)(1, 3) = 7.0;  // column 3, row 1 of a 2 x 4 matrix at offset 16
  mlp.bias(0)(2) = -3.0;
  EXPECT_EQ(mlp.parameters()[16 + 3 * 2 + 1], 7.0);
  EXPECT_EQ(mlp.parameters()[12 + 2], -3.0);
  EXPECT_EQ(mlp.parameters().cwiseAbs().sum(), 10.0);
}

TEST(Mlp, BatchedForwardEqualsColumnWise) {
  const Mlp mlp({5, 16, 8, 3}, 42);
  const Eigen::MatrixXd inputs = random_matrix(5, 7, 1);
  const Eigen::MatrixXd outputs = mlp.forward(inputs);
  ASSERT_EQ(outputs.rows(), 3);
  ASSERT_EQ(outputs.cols(), 7);
  for (Eigen::Index n = 0; n < inputs.cols(); ++n) {
    const Eigen::VectorXd single = mlp.forward(Eigen::VectorXd(inputs.col(n)));
    for (Eigen::Index i = 0; i < 3; ++i) EXPECT_NEAR(outputs(i, n), single[i], 1e-14);
  }
}

TEST(Mlp, SetParametersRoundTripAndSizeError) {
  Mlp mlp({4, 8, 2});
  const Eigen::VectorXd p = random_vector(mlp.parameter_count(), 7);
  mlp.set_parameters(p);
  EXPECT_EQ(mlp.parameters(), p);
  Mlp other({4, 8, 2});
  other.set_parameters(mlp.parameters());
  EXPECT_EQ(other.forward(Eigen::VectorXd::Ones(4).eval()),
            mlp.forward(Eigen::VectorXd::Ones(4).eval()));

  EXPECT_THROW(mlp.set_parameters(Eigen::VectorXd::Zero(p.size() + 1)), std::invalid_argument);
  EXPECT_THROW(mlp.set_parameters(Eigen::VectorXd::Zero(p.size() - 1)), std::invalid_argument);
  EXPECT_EQ(mlp.parameters(), p);  // unchanged by the failed calls
}

TEST(Mlp, SameSeedSameInitDifferentSeedsDiffer) {
  for (Initializer init : {Initializer::kNormc, Initializer::kXavier}) {
    const Mlp a({6, 32, 32, 3}, 123, init);
    const Mlp b({6, 32, 32, 3}, 123, init);
    const Mlp c({6, 32, 32, 3}, 124, init);
    EXPECT_EQ(a.parameters(), b.parameters());
    EXPECT_NE(a.parameters(), c.parameters());
    // Re-initializing gives the same draw again.
    Mlp d({6, 32, 32, 3});
    d.initialize(123, init);
    EXPECT_EQ(d.parameters(), a.parameters());
  }
  EXPECT_NE(Mlp({6, 32, 3}, 1, Initializer::kNormc).parameters(),
            Mlp({6, 32, 3}, 1, Initializer::kXavier).parameters());
}

TEST(Mlp, NormcRowNormsAndZeroBiases) {
  const Mlp mlp({10, 32, 16, 4}, 5);  // kNormc is the default
  for (std::size_t l = 0; l < mlp.layer_count(); ++l) {
    const double target = l + 1 == mlp.layer_count() ? 0.01 : 1.0;
    const auto w = mlp.weights(l);
    for (Eigen::Index i = 0; i < w.rows(); ++i) EXPECT_NEAR(w.row(i).norm(), target, 1e-12);
    EXPECT_EQ(mlp.bias(l).cwiseAbs().maxCoeff(), 0.0);
  }
}

TEST(Mlp, XavierWithinBoundsAndZeroBiases) {
  const Mlp mlp({10, 32, 4}, 5, Initializer::kXavier);
  for (std::size_t l = 0; l < mlp.layer_count(); ++l) {
    const auto w = mlp.weights(l);
    const double a = std::sqrt(6.0 / static_cast<double>(w.rows() + w.cols()));
    EXPECT_LE(w.cwiseAbs().maxCoeff(), a);
    EXPECT_GT(w.cwiseAbs().maxCoeff(), 0.5 * a);  // really spread over the range
    EXPECT_EQ(mlp.bias(l).cwiseAbs().maxCoeff(), 0.0);
  }
}

// loss(theta) = sum(G .* forward(X)), so d loss / d output = G.
double weighted_output(const Mlp& mlp, const Eigen::MatrixXd& x, const Eigen::MatrixXd& g) {
  return (mlp.forward(x).array() * g.array()).sum();
}

void check_backprop(const std::vector<Eigen::Index>& sizes, Eigen::Index batch,
                    std::uint64_t seed) {
  Mlp mlp(sizes);
  // Random parameters of moderate scale so that every layer's gradient is sizeable.
  mlp.set_parameters(random_vector(mlp.parameter_count(), seed, 0.5));
  const Eigen::MatrixXd x = random_matrix(mlp.input_size(), batch, seed + 1);
  const Eigen::MatrixXd g = random_matrix(mlp.output_size(), batch, seed + 2);

  Eigen::MatrixXd input_gradient;
  const Eigen::VectorXd analytic = mlp.backward(x, g, &input_gradient);
  ASSERT_EQ(analytic.size(), mlp.parameter_count());

  const double h = 1e-5;
  Eigen::VectorXd numeric(mlp.parameter_count());
  Mlp probe = mlp;
  for (Eigen::Index k = 0; k < mlp.parameter_count(); ++k) {
    Eigen::VectorXd p = mlp.parameters();
    p[k] += h;
    probe.set_parameters(p);
    const double plus = weighted_output(probe, x, g);
    p[k] -= 2.0 * h;
    probe.set_parameters(p);
    const double minus = weighted_output(probe, x, g);
    numeric[k] = (plus - minus) / (2.0 * h);
  }

  // Every layer's weights and biases separately.
  for (std::size_t l = 0; l < mlp.layer_count(); ++l) {
    const LayerLayout& layer = mlp.layout(l);
    for (auto [offset, size] : {std::pair{layer.weight_offset, layer.outputs * layer.inputs},
                                std::pair{layer.bias_offset, layer.outputs}}) {
      const Eigen::VectorXd a = analytic.segment(offset, size);
      const Eigen::VectorXd n = numeric.segment(offset, size);
      ASSERT_GT(n.norm(), 1e-3) << "layer " << l;
      const double relative = (a - n).norm() / std::max(a.norm(), n.norm());
      EXPECT_LT(relative, 1e-6) << "layer " << l << " offset " << offset;
      for (Eigen::Index i = 0; i < size; ++i) {
        EXPECT_NEAR(a[i], n[i], 1e-6 * std::max(1.0, std::abs(n[i])))
            << "layer " << l << " parameter " << offset + i;
      }
    }
  }

  // Input gradients too.
  ASSERT_EQ(input_gradient.rows(), mlp.input_size());
  ASSERT_EQ(input_gradient.cols(), batch);
  Eigen::MatrixXd numeric_input(mlp.input_size(), batch);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index n = 0; n < x.cols(); ++n) {
      Eigen::MatrixXd xp = x;
      xp(i, n) += h;
      Eigen::MatrixXd xm = x;
      xm(i, n) -= h;
      numeric_input(i, n) = (weighted_output(mlp, xp, g) - weighted_output(mlp, xm, g)) / (2 * h);
    }
  }
  EXPECT_LT((input_gradient - numeric_input).norm() / numeric_input.norm(), 1e-6);

  // The cached variant gives the same gradient.
  const Mlp::ForwardCache cache = mlp.forward_with_cache(x);
  EXPECT_EQ(cache.outputs, mlp.forward(x));
  EXPECT_EQ(mlp.backward(cache, g), analytic);
}

TEST(Mlp, BackpropMatchesFiniteDifferences) {
  check_backprop({3, 5, 4, 2}, 4, 11);  // two tanh layers
  check_backprop({4, 6, 3}, 5, 21);     // one tanh layer
  check_backprop({3, 2}, 3, 31);        // linear only
}

TEST(Mlp, BackwardChecksShapes) {
  const Mlp mlp({3, 4, 2}, 1);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 5);
  EXPECT_THROW(mlp.backward(x, Eigen::MatrixXd::Ones(2, 4)), std::invalid_argument);
  EXPECT_THROW(mlp.backward(x, Eigen::MatrixXd::Ones(3, 5)), std::invalid_argument);
  EXPECT_THROW(mlp.backward(Eigen::MatrixXd::Ones(2, 5), Eigen::MatrixXd::Ones(2, 5)),
               std::invalid_argument);
  // Gradients of a batch are the sums of the per-column gradients.
  const Eigen::MatrixXd xr = random_matrix(3, 5, 3);
  const Eigen::MatrixXd g = random_matrix(2, 5, 4);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(mlp.parameter_count());
  for (Eigen::Index n = 0; n < 5; ++n) {
    sum += mlp.backward(Eigen::MatrixXd(xr.col(n)), Eigen::MatrixXd(g.col(n)));
  }
  EXPECT_LT((sum - mlp.backward(xr, g)).norm(), 1e-12);
}

template <class OArchive, class IArchive>
void check_serialization_round_trip() {
  const Mlp original({5, 7, 3}, 99);
  std::stringstream stream;
  {
    OArchive out(stream);
    out << original;
  }
  Mlp loaded;
  {
    IArchive in(stream);
    in >> loaded;
  }
  EXPECT_EQ(loaded.layer_sizes(), original.layer_sizes());
  EXPECT_EQ(loaded.parameters(), original.parameters());
  EXPECT_EQ(loaded.layout(1).bias_offset, original.layout(1).bias_offset);
  const Eigen::VectorXd x = random_vector(5, 3);
  EXPECT_EQ(loaded.forward(x), original.forward(x));
}

TEST(Mlp, BoostSerializationRoundTrip) {
  check_serialization_round_trip<boost::archive::binary_oarchive,
                                 boost::archive::binary_iarchive>();
  check_serialization_round_trip<boost::archive::text_oarchive, boost::archive::text_iarchive>();
}

TEST(EigenSerialization, VectorsMatricesAndShapeCheck) {
  const Eigen::MatrixXd m = random_matrix(3, 4, 8);
  const Eigen::VectorXd empty;
  std::stringstream stream;
  {
    boost::archive::binary_oarchive out(stream);
    out << m << empty << m;
  }
  Eigen::MatrixXd m2;
  Eigen::VectorXd empty2 = Eigen::VectorXd::Ones(3);
  Eigen::Matrix<double, 2, 2> wrong;
  boost::archive::binary_iarchive in(stream);
  in >> m2 >> empty2;
  EXPECT_EQ(m2, m);
  EXPECT_EQ(empty2.size(), 0);
  EXPECT_THROW(in >> wrong, std::runtime_error);
}

}  // namespace
}  // namespace fiber::rl
