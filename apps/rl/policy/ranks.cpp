#include "policy/ranks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiber::rl {

namespace {

// Ranks of n values read through `value(i)`, stable, NaNs last.
template <class Value>
Eigen::VectorXd ranks_of(Eigen::Index n, Value value) {
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::stable_sort(order.begin(), order.end(), [&value](Eigen::Index a, Eigen::Index b) {
    const double x = value(a);
    const double y = value(b);
    return !std::isnan(x) && (std::isnan(y) || x < y);
  });
  Eigen::VectorXd result(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    result[order[static_cast<std::size_t>(r)]] = static_cast<double>(r);
  }
  return result;
}

Eigen::VectorXd center(Eigen::VectorXd ranks) {
  const Eigen::Index n = ranks.size();
  if (n == 1) return Eigen::VectorXd::Zero(1);
  if (n == 0) return ranks;
  ranks /= static_cast<double>(n - 1);
  ranks.array() -= 0.5;
  return ranks;
}

}  // namespace

Eigen::VectorXd ranks(const Eigen::VectorXd& x) {
  return ranks_of(x.size(), [&x](Eigen::Index i) { return x[i]; });
}

Eigen::VectorXd centered_ranks(const Eigen::VectorXd& x) { return center(ranks(x)); }

Eigen::MatrixXd centered_ranks_matrix(const Eigen::MatrixXd& returns) {
  const Eigen::Index rows = returns.rows();
  const Eigen::Index cols = returns.cols();
  // Flat index k = i * cols + j (row-major, numpy's ravel()).
  const Eigen::VectorXd flat = center(ranks_of(
      returns.size(), [&returns, cols](Eigen::Index k) { return returns(k / cols, k % cols); }));
  Eigen::MatrixXd result(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    for (Eigen::Index j = 0; j < cols; ++j) result(i, j) = flat[i * cols + j];
  }
  return result;
}

Eigen::VectorXd antithetic_weights(const Eigen::MatrixXd& processed_returns_n2) {
  if (processed_returns_n2.cols() != 2) {
    throw std::invalid_argument("antithetic_weights: expected an n x 2 matrix, got " +
                                std::to_string(processed_returns_n2.rows()) + " x " +
                                std::to_string(processed_returns_n2.cols()));
  }
  return processed_returns_n2.col(0) - processed_returns_n2.col(1);
}

}  // namespace fiber::rl
