// The master side of fiber-es: OpenAI-ES (Salimans et al. 2017) on a fiber pool, with an HDF5
// run log and atomic checkpoints that a later run resumes from bit for bit.
#pragma once

#include "options.hpp"

namespace fiber::es {

// Runs the whole training; returns the process exit code. Errors that end the run (a damaged
// checkpoint, an unwritable log) are printed as one line.
int train(const Options& options);

}  // namespace fiber::es
