// Conversions between Eigen vectors (what the algorithms compute with) and std::vector<double>
// (what tasks, checkpoints and messages carry).
#pragma once

#include <Eigen/Core>

#include <vector>

namespace fiber::rl {

// Any Eigen vector (dynamic or fixed size) as a std::vector<double>.
template <class Vector>
std::vector<double> to_vector(const Vector& v) {
  return {v.data(), v.data() + v.size()};
}

inline Eigen::VectorXd to_eigen(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace fiber::rl
