// fiber::rl::Environment: the one interface of the reinforcement-learning environments, and the
// factory that makes them by name.
//
//   auto env = fiber::rl::make_environment("CartPole-v1");
//   Eigen::VectorXd obs = env->reset(seed);          // deterministic given the seed
//   for (;;) {
//     Eigen::VectorXd action(1);
//     action << policy(obs);                          // discrete: one entry, the action index
//     fiber::rl::StepResult r = env->step(action);
//     episode_return += r.reward;
//     obs = r.observation;
//     if (r.terminated || r.truncated) break;
//   }
//
// Names (environment_names()): CartPole-v1, Acrobot-v1, Pendulum-v1, MountainCarContinuous-v0
// (Gymnasium's classic-control dynamics, rewards, termination rules and time limits, in double
// precision), Humanoid-v5 (Gymnasium's, on its model) and Humanoid-MuJoCoModel (MuJoCo's own
// humanoid model, a reward without contact cost: humanoid.hpp).
//
// Truncation is the environment's own business (as Gymnasium's TimeLimit wrapper): step() sets
// `truncated` on the max_episode_steps()-th step after a reset, whether or not it also
// terminates. An environment is not thread-safe; use one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace fiber::rl {

// What step() takes. Discrete: `size` actions 0..size-1, and the action vector holds one entry,
// the index (a whole number). Continuous: a vector of `size` entries, each clipped by the
// environment to [low[i], high[i]].
struct ActionSpace {
  bool discrete = false;
  int size = 0;
  std::vector<double> low;   // continuous only: size entries
  std::vector<double> high;  // continuous only: size entries

  static ActionSpace discrete_actions(int n);
  static ActionSpace box(std::vector<double> low, std::vector<double> high);

  // Length of the action vector step() takes: 1 if discrete, else size.
  int dimension() const { return discrete ? 1 : size; }
};

struct StepResult {
  Eigen::VectorXd observation;
  double reward = 0.0;
  bool terminated = false;  // the episode ended in a terminal state (fell, reached the goal)
  bool truncated = false;   // the episode hit max_episode_steps()
};

class Environment {
 public:
  virtual ~Environment() = default;
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  virtual std::string name() const = 0;
  virtual int observation_size() const = 0;
  virtual const ActionSpace& action_space() const = 0;
  virtual int max_episode_steps() const = 0;

  // Starts an episode from an initial state drawn with an RNG seeded by `seed` alone.
  Eigen::VectorXd reset(std::uint64_t seed);

  // Advances one step. Throws std::invalid_argument for an action of the wrong length, a
  // discrete action that is not a valid index, or a NaN entry; std::logic_error before reset().
  StepResult step(const Eigen::VectorXd& action);

  // Steps taken since the episode started (reset() or a set_state()).
  int elapsed_steps() const { return elapsed_steps_; }

 protected:
  Environment() = default;

  virtual Eigen::VectorXd do_reset(std::uint64_t seed) = 0;
  // `action` has been checked: the right length, a valid index if discrete, no NaN.
  virtual StepResult do_step(const Eigen::VectorXd& action) = 0;

  // For the subclasses' set_state(): an episode starts from a state set by hand.
  void start_episode() {
    started_ = true;
    elapsed_steps_ = 0;
  }

  // The action clipped to the continuous action space's bounds.
  Eigen::VectorXd clip_to_action_space(const Eigen::VectorXd& action) const;

 private:
  bool started_ = false;
  int elapsed_steps_ = 0;
};

// Makes an environment by name; throws std::invalid_argument for an unknown name, with a message
// listing the known names.
std::unique_ptr<Environment> make_environment(const std::string& name);

// The names make_environment() knows, in a fixed order.
std::vector<std::string> environment_names();

}  // namespace fiber::rl
