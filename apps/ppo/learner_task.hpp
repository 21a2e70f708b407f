// The update as a task of a learner: fiber-ppo --learner-cores N > 1 makes a pool of one worker
// of shape {cores = N} (bound to N cores of its node) and sends it each iteration's update. The
// task carries the model, Adam's state, the minibatch permutations' engine and the samples; the
// learner runs ppo_update on N threads and sends back the model, Adam and the engine, so the run
// goes on as if the master had updated: bit-identical to --learner-cores 1 (tests/ppo), since
// the update's results do not depend on its threads (learner.hpp).
// docs/design.md "The PPO update on a wide learner".
#pragma once

#include <string>

#include <boost/serialization/string.hpp>

#include "actor_critic.hpp"
#include "learner.hpp"
#include "policy/adam.hpp"

namespace fiber::ppo {

struct LearnerTask {
  ActorCritic model;
  rl::Adam adam;    // its stepsize set for the iteration
  std::string rng;  // the std::mt19937_64 of the minibatch permutations, as text
  Samples samples;
  UpdateSettings settings;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& model& adam& rng& samples& settings;
  }
};

struct LearnerResult {
  ActorCritic model;
  rl::Adam adam;
  std::string rng;
  UpdateReport report;
  double seconds = 0;  // the update's wall time in the learner
  int cores = 0;       // cores the learner's task process may run on (its affinity)

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& model& adam& rng& report& seconds& cores;
  }
};

// The task (registered with FIBER_TASK in learner_task.cpp).
LearnerResult ppo_learn(LearnerTask task);

}  // namespace fiber::ppo
