// The master side of fiber-ppo: PPO (Schulman et al. 2017) with rollouts on a fiber pool, an
// HDF5 run log and atomic checkpoints that a later run resumes from bit for bit.
#pragma once

#include "options.hpp"

namespace fiber::ppo {

// Runs the whole training; returns the process exit code. Errors that end the run (a damaged
// checkpoint, an unwritable log) are printed as one line.
int train(const Options& options);

}  // namespace fiber::ppo
