// The physical state of a classic-control environment as a few numbers, so that an environment
// slot can continue its episode on whichever worker runs its next segment (see rollout.hpp).
// Restoring a captured state and stepping gives bit for bit what stepping the original would.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "envs/environment.hpp"

namespace fiber::ppo {

// True for the environments whose state can be captured: CartPole-v1, Acrobot-v1, Pendulum-v1,
// MountainCarContinuous-v0 (not the MuJoCo humanoid).
bool has_capturable_state(const std::string& environment);

// The environment's state vector (its set_state() argument). std::invalid_argument for an
// environment without one.
std::vector<double> capture_state(const rl::Environment& environment);

// Puts `environment` in `state` (as captured) and returns its observation there. The
// environment's own step counter restarts at 0: the caller counts an episode's steps.
Eigen::VectorXd restore_state(rl::Environment& environment, const std::vector<double>& state);

}  // namespace fiber::ppo
