#include "environment_state.hpp"

#include <stdexcept>

#include "envs/acrobot.hpp"
#include "envs/cartpole.hpp"
#include "envs/humanoid.hpp"
#include "envs/mountain_car_continuous.hpp"
#include "envs/pendulum.hpp"
#include "run/eigen_conversions.hpp"

namespace fiber::ppo {
namespace {

using rl::to_vector;

template <class Fixed>
Fixed to_fixed(const std::vector<double>& state, const rl::Environment& environment) {
  if (static_cast<Eigen::Index>(state.size()) != Fixed::SizeAtCompileTime) {
    throw std::invalid_argument("fiber-ppo: a state of " + std::to_string(state.size()) +
                                " values for " + environment.name() + ", which has " +
                                std::to_string(Fixed::SizeAtCompileTime));
  }
  return Eigen::Map<const Fixed>(state.data());
}

[[noreturn]] void unsupported(const rl::Environment& environment) {
  throw std::invalid_argument("fiber-ppo: " + environment.name() +
                              " has no state that can be captured");
}

}  // namespace

std::vector<double> capture_state(const rl::Environment& environment) {
  if (auto* e = dynamic_cast<const rl::CartPole*>(&environment)) return to_vector(e->state());
  if (auto* e = dynamic_cast<const rl::Acrobot*>(&environment)) return to_vector(e->state());
  if (auto* e = dynamic_cast<const rl::Pendulum*>(&environment)) return to_vector(e->state());
  if (auto* e = dynamic_cast<const rl::MountainCarContinuous*>(&environment)) {
    return to_vector(e->state());
  }
  if (auto* e = dynamic_cast<const rl::Humanoid*>(&environment)) return e->state();
  unsupported(environment);
}

Eigen::VectorXd restore_state(rl::Environment& environment, const std::vector<double>& state) {
  if (auto* e = dynamic_cast<rl::CartPole*>(&environment)) {
    return e->set_state(to_fixed<Eigen::Vector4d>(state, environment));
  }
  if (auto* e = dynamic_cast<rl::Acrobot*>(&environment)) {
    return e->set_state(to_fixed<Eigen::Vector4d>(state, environment));
  }
  if (auto* e = dynamic_cast<rl::Pendulum*>(&environment)) {
    return e->set_state(to_fixed<Eigen::Vector2d>(state, environment));
  }
  if (auto* e = dynamic_cast<rl::MountainCarContinuous*>(&environment)) {
    return e->set_state(to_fixed<Eigen::Vector2d>(state, environment));
  }
  if (auto* e = dynamic_cast<rl::Humanoid*>(&environment)) return e->set_state(state);
  unsupported(environment);
}

}  // namespace fiber::ppo
