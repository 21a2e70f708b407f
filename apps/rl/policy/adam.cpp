#include "policy/adam.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace fiber::rl {

Adam::Adam(Eigen::Index dim, double stepsize, double beta1, double beta2, double epsilon)
    : beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {
  if (dim < 0) throw std::invalid_argument("Adam: negative dimension");
  if (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0)) {
    throw std::invalid_argument("Adam: beta1 and beta2 must be in [0, 1)");
  }
  if (!(epsilon >= 0.0)) throw std::invalid_argument("Adam: epsilon must be >= 0");
  set_stepsize(stepsize);
  m_ = Eigen::VectorXd::Zero(dim);
  v_ = Eigen::VectorXd::Zero(dim);
}

void Adam::set_stepsize(double stepsize) {
  if (!(stepsize >= 0.0)) throw std::invalid_argument("Adam: stepsize must be >= 0");
  stepsize_ = stepsize;
}

Eigen::VectorXd Adam::compute_step(const Eigen::VectorXd& gradient) {
  if (gradient.size() != dim()) {
    throw std::invalid_argument("Adam: gradient has " + std::to_string(gradient.size()) +
                                " values, the optimizer " + std::to_string(dim()));
  }
  ++t_;
  const double t = static_cast<double>(t_);
  const double a = stepsize_ * std::sqrt(1.0 - std::pow(beta2_, t)) / (1.0 - std::pow(beta1_, t));
  m_ = beta1_ * m_ + (1.0 - beta1_) * gradient;
  v_ = beta2_ * v_ + (1.0 - beta2_) * gradient.cwiseProduct(gradient);
  return (-a * m_.array() / (v_.array().sqrt() + epsilon_)).matrix();
}

double Adam::update(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) {
  if (theta.size() != dim()) {
    throw std::invalid_argument("Adam: theta has " + std::to_string(theta.size()) +
                                " values, the optimizer " + std::to_string(dim()));
  }
  const Eigen::VectorXd step = compute_step(gradient);
  const double theta_norm = theta.norm();
  const double ratio = theta_norm > 0.0 ? step.norm() / theta_norm : 0.0;
  theta += step;
  return ratio;
}

Adam::State Adam::state() const {
  return {std::vector<double>(m_.data(), m_.data() + m_.size()),
          std::vector<double>(v_.data(), v_.data() + v_.size()), t_};
}

void Adam::set_state(const State& state) {
  if (static_cast<Eigen::Index>(state.m.size()) != dim() ||
      static_cast<Eigen::Index>(state.v.size()) != dim()) {
    throw std::invalid_argument("Adam::set_state: m and v have " + std::to_string(state.m.size()) +
                                " and " + std::to_string(state.v.size()) +
                                " values, the optimizer " + std::to_string(dim()));
  }
  m_ = Eigen::Map<const Eigen::VectorXd>(state.m.data(), dim());
  v_ = Eigen::Map<const Eigen::VectorXd>(state.v.data(), dim());
  t_ = state.t;
}

}  // namespace fiber::rl
