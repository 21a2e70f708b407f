#include "policy/normalizer.hpp"

#include <stdexcept>
#include <string>

namespace fiber::rl {

namespace {

void check_dim(const char* what, Eigen::Index got, Eigen::Index expected) {
  if (got != expected) {
    throw std::invalid_argument(std::string("RunningNormalizer: ") + what + " has " +
                                std::to_string(got) + " values, expected " +
                                std::to_string(expected));
  }
}

void check_count(double count) {
  if (!(count >= 0.0)) throw std::invalid_argument("RunningNormalizer: count must be >= 0");
}

}  // namespace

Eigen::VectorXd normalize_observation(const Eigen::VectorXd& observation,
                                      const Eigen::VectorXd& mean, const Eigen::VectorXd& std_dev,
                                      double clip) {
  if (observation.size() != mean.size() || observation.size() != std_dev.size()) {
    throw std::invalid_argument("normalize_observation: observation, mean and std have " +
                                std::to_string(observation.size()) + ", " +
                                std::to_string(mean.size()) + " and " +
                                std::to_string(std_dev.size()) + " values");
  }
  return ((observation - mean).array() / std_dev.array()).cwiseMax(-clip).cwiseMin(clip).matrix();
}

RunningNormalizer::RunningNormalizer(Eigen::Index dim, double eps) {
  if (dim < 0) throw std::invalid_argument("RunningNormalizer: negative dimension");
  if (!(eps >= 0.0)) throw std::invalid_argument("RunningNormalizer: eps must be >= 0");
  sum_ = Eigen::VectorXd::Zero(dim);
  sumsq_ = Eigen::VectorXd::Constant(dim, eps);
  count_ = eps;
}

void RunningNormalizer::observe(const Eigen::VectorXd& observation) {
  check_dim("observation", observation.size(), dim());
  sum_ += observation;
  sumsq_.array() += observation.array().square();
  count_ += 1.0;
}

void RunningNormalizer::observe_batch(const Eigen::MatrixXd& observations_as_columns) {
  check_dim("each observation (rows)", observations_as_columns.rows(), dim());
  sum_ += observations_as_columns.rowwise().sum();
  sumsq_ += observations_as_columns.array().square().matrix().rowwise().sum();
  count_ += static_cast<double>(observations_as_columns.cols());
}

void RunningNormalizer::increment(const Eigen::VectorXd& sum, const Eigen::VectorXd& sumsq,
                                  double count) {
  check_dim("sum", sum.size(), dim());
  check_dim("sumsq", sumsq.size(), dim());
  check_count(count);
  sum_ += sum;
  sumsq_ += sumsq;
  count_ += count;
}

void RunningNormalizer::increment(const RunningNormalizer& other) {
  increment(other.sum_, other.sumsq_, other.count_);
}

void RunningNormalizer::set_from_init(const Eigen::VectorXd& mean, const Eigen::VectorXd& std_dev,
                                      double count) {
  check_dim("mean", mean.size(), dim());
  check_dim("std", std_dev.size(), dim());
  check_count(count);
  sum_ = mean * count;
  sumsq_ = (mean.array().square() + std_dev.array().square()).matrix() * count;
  count_ = count;
}

Eigen::VectorXd RunningNormalizer::mean() const {
  if (count_ == 0.0) return Eigen::VectorXd::Zero(dim());
  return sum_ / count_;
}

Eigen::VectorXd RunningNormalizer::std() const {
  if (count_ == 0.0) return Eigen::VectorXd::Ones(dim());
  const Eigen::ArrayXd m = sum_.array() / count_;
  const Eigen::ArrayXd variance = sumsq_.array() / count_ - m.square();
  return variance.cwiseMax(kVarianceFloor).sqrt().matrix();
}

Eigen::VectorXd RunningNormalizer::normalize(const Eigen::VectorXd& observation,
                                             double clip) const {
  check_dim("observation", observation.size(), dim());
  return normalize_observation(observation, mean(), std(), clip);
}

RunningNormalizer::State RunningNormalizer::state() const {
  return {std::vector<double>(sum_.data(), sum_.data() + sum_.size()),
          std::vector<double>(sumsq_.data(), sumsq_.data() + sumsq_.size()), count_};
}

void RunningNormalizer::set_state(const State& state) {
  if (state.sum.size() != state.sumsq.size()) {
    throw std::invalid_argument("RunningNormalizer::set_state: sum has " +
                                std::to_string(state.sum.size()) + " values, sumsq " +
                                std::to_string(state.sumsq.size()));
  }
  check_count(state.count);
  const auto n = static_cast<Eigen::Index>(state.sum.size());
  sum_ = Eigen::Map<const Eigen::VectorXd>(state.sum.data(), n);
  sumsq_ = Eigen::Map<const Eigen::VectorXd>(state.sumsq.data(), n);
  count_ = state.count;
}

bool operator==(const RunningNormalizer& a, const RunningNormalizer& b) {
  return a.dim() == b.dim() && a.sum_ == b.sum_ && a.sumsq_ == b.sumsq_ && a.count_ == b.count_;
}

}  // namespace fiber::rl
