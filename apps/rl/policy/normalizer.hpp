// Observation normalization with running statistics, as OpenAI-ES's RunningStat ("ObStat").
//
// The state is three numbers per dimension summed over all observations seen: sum, sumsq (sum of
// squares) and count (a double, shared by all dimensions). Then
//   mean() = sum / count
//   std()  = sqrt(max(sumsq / count - mean^2, 1e-2))     (so std >= 0.1 always)
//   normalize(obs) = clip((obs - mean) / std, -5, 5)
// exactly as es_distributed/es.py and policies.py. Construction with eps > 0 starts from
// sumsq = eps and count = eps (OpenAI-ES's master uses eps = 1e-2, "to prevent dividing by zero at
// the beginning"); statistics gathered on a worker to be merged into the master's with
// increment() must start from eps = 0, or each merge adds eps again. With count == 0, mean() is
// zero and std() is one (normalize() is then the identity up to clipping).
//
// Statistics gathered elsewhere merge exactly: a.increment(b) equals having observed everything
// in one place (up to floating-point summation order).
//
// Checkpoints: state() / set_state() give the state as plain std::vector<double> and a double (for
// HDF5), and serialize() makes the class a Boost.Serialization type (and so a fiber task argument
// or result).
#pragma once

#include <vector>

#include <Eigen/Core>

#include "policy/eigen_serialization.hpp"

namespace fiber::rl {

// clip((observation - mean) / std, -clip, clip), for workers that receive mean and std from the
// master (as OpenAI-ES's tasks carry ob_mean and ob_std). Sizes are checked
// (std::invalid_argument).
Eigen::VectorXd normalize_observation(const Eigen::VectorXd& observation,
                                      const Eigen::VectorXd& mean, const Eigen::VectorXd& std_dev,
                                      double clip = 5.0);

class RunningNormalizer {
 public:
  static constexpr double kVarianceFloor = 1e-2;  // std() >= sqrt(kVarianceFloor)
  static constexpr double kDefaultClip = 5.0;

  // The state as plain vectors, for checkpoints.
  struct State {
    std::vector<double> sum;
    std::vector<double> sumsq;
    double count = 0.0;
  };

  // Dimension 0; for deserialization or set_state().
  RunningNormalizer() = default;
  // `dim` dimensions, sum = 0, sumsq = eps, count = eps. Master: eps = 1e-2 (the default, as
  // OpenAI-ES); per-worker statistics to be merged: eps = 0. Throws std::invalid_argument for
  // dim < 0 or eps < 0.
  explicit RunningNormalizer(Eigen::Index dim, double eps = 1e-2);

  Eigen::Index dim() const { return sum_.size(); }

  // Adds one observation (size dim(), checked).
  void observe(const Eigen::VectorXd& observation);
  // Adds a batch, one observation per column (dim() x N, checked).
  void observe_batch(const Eigen::MatrixXd& observations_as_columns);
  // Merges statistics gathered elsewhere: sum += sum, sumsq += sumsq, count += count (sizes
  // checked, count >= 0).
  void increment(const Eigen::VectorXd& sum, const Eigen::VectorXd& sumsq, double count);
  void increment(const RunningNormalizer& other);
  // OpenAI-ES's set_from_init: sum = mean * count, sumsq = (mean^2 + std_dev^2) * count.
  void set_from_init(const Eigen::VectorXd& mean, const Eigen::VectorXd& std_dev, double count);

  Eigen::VectorXd mean() const;
  Eigen::VectorXd std() const;
  const Eigen::VectorXd& sum() const { return sum_; }
  const Eigen::VectorXd& sumsq() const { return sumsq_; }
  double count() const { return count_; }

  // clip((observation - mean()) / std(), -clip, clip); for many observations compute mean() and
  // std() once and use normalize_observation().
  Eigen::VectorXd normalize(const Eigen::VectorXd& observation, double clip = kDefaultClip) const;

  State state() const;
  // Restores exactly (sizes of sum and sumsq must agree, count >= 0; std::invalid_argument).
  void set_state(const State& state);

  template <class Archive>
  void serialize(Archive& archive, const unsigned int /*version*/) {
    archive& sum_;
    archive& sumsq_;
    archive& count_;
  }

  // Same dimension and bit-identical sum, sumsq and count.
  friend bool operator==(const RunningNormalizer& a, const RunningNormalizer& b);

 private:
  Eigen::VectorXd sum_;
  Eigen::VectorXd sumsq_;
  double count_ = 0.0;
};

}  // namespace fiber::rl
