#include "envs/environment.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "envs/acrobot.hpp"
#include "envs/cartpole.hpp"
#include "envs/humanoid.hpp"
#include "envs/mountain_car_continuous.hpp"
#include "envs/pendulum.hpp"

namespace fiber::rl {

namespace {

std::string format_number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

ActionSpace ActionSpace::discrete_actions(int n) {
  ActionSpace space;
  space.discrete = true;
  space.size = n;
  return space;
}

ActionSpace ActionSpace::box(std::vector<double> low, std::vector<double> high) {
  if (low.size() != high.size()) {
    throw std::invalid_argument("fiber::rl::ActionSpace::box: low and high differ in length");
  }
  ActionSpace space;
  space.discrete = false;
  space.size = static_cast<int>(low.size());
  space.low = std::move(low);
  space.high = std::move(high);
  return space;
}

Eigen::VectorXd Environment::reset(std::uint64_t seed) {
  Eigen::VectorXd observation = do_reset(seed);
  start_episode();
  return observation;
}

StepResult Environment::step(const Eigen::VectorXd& action) {
  if (!started_) {
    throw std::logic_error("fiber::rl: step() before reset() on " + name());
  }
  const ActionSpace& space = action_space();
  if (action.size() != space.dimension()) {
    throw std::invalid_argument("fiber::rl: " + name() + " takes an action vector of " +
                                std::to_string(space.dimension()) + " entries, not " +
                                std::to_string(action.size()));
  }
  if (action.hasNaN()) {
    throw std::invalid_argument("fiber::rl: NaN in the action given to " + name());
  }
  if (space.discrete) {
    const double a = action(0);
    if (a != std::floor(a) || a < 0.0 || a >= static_cast<double>(space.size)) {
      throw std::invalid_argument("fiber::rl: " + name() + " takes a discrete action 0.." +
                                  std::to_string(space.size - 1) + ", not " + format_number(a));
    }
  }
  StepResult result = do_step(action);
  ++elapsed_steps_;
  if (elapsed_steps_ >= max_episode_steps()) result.truncated = true;
  return result;
}

Eigen::VectorXd Environment::clip_to_action_space(const Eigen::VectorXd& action) const {
  const ActionSpace& space = action_space();
  Eigen::VectorXd clipped = action;
  for (int i = 0; i < space.size; ++i) {
    const auto k = static_cast<std::size_t>(i);
    clipped(i) = std::clamp(action(i), space.low[k], space.high[k]);
  }
  return clipped;
}

namespace {

struct Entry {
  const char* name;
  std::function<std::unique_ptr<Environment>()> make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries{
      {CartPole::kName, [] { return std::make_unique<CartPole>(); }},
      {Acrobot::kName, [] { return std::make_unique<Acrobot>(); }},
      {Pendulum::kName, [] { return std::make_unique<Pendulum>(); }},
      {MountainCarContinuous::kName, [] { return std::make_unique<MountainCarContinuous>(); }},
      {Humanoid::kV5Name, [] { return std::make_unique<Humanoid>(); }},
      {Humanoid::kMujocoModelName,
       [] {
         return std::make_unique<Humanoid>(Humanoid::Options{
             .model = Humanoid::Model::mujoco, .xml_path = "", .full_observation = true});
       }},
  };
  return entries;
}

}  // namespace

std::unique_ptr<Environment> make_environment(const std::string& name) {
  for (const Entry& entry : registry()) {
    if (name == entry.name) return entry.make();
  }
  std::string known;
  for (const Entry& entry : registry()) {
    if (!known.empty()) known += ", ";
    known += entry.name;
  }
  throw std::invalid_argument("fiber::rl: unknown environment '" + name +
                              "'; known environments: " + known);
}

std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (const Entry& entry : registry()) names.emplace_back(entry.name);
  return names;
}

}  // namespace fiber::rl
