// The physical state of an environment as numbers, so that an environment slot can continue its
// episode on whichever worker runs its next segment (see rollout.hpp): a few for the classic
// environments, MuJoCo's state for the humanoids (rl::Humanoid::state()). Restoring a captured
// state and stepping gives bit for bit what stepping the original would.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::ppo {

// The environment's state vector (its set_state() argument). std::invalid_argument for an
// environment without one (none of make_environment()'s).
std::vector<double> capture_state(const rl::Environment& environment);

// Puts `environment` in `state` (as captured) and returns its observation there. The
// environment's own step counter restarts at 0: the caller counts an episode's steps.
Eigen::VectorXd restore_state(rl::Environment& environment, const std::vector<double>& state);

}  // namespace fiber::ppo
