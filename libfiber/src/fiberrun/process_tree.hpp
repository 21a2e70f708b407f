// The processes of a job on this host, as fiberrun sees them: mpirun's descendants (its node
// daemons or their launchers, and every process they started), read from /proc. fiberrun counts
// them while a job ends (job_end_watch.hpp).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>

namespace fiberrun {

// How many processes descend from `root` (not counting it) in the /proc at `proc`. A process
// that ends while it is read is not counted.
std::size_t count_descendants(pid_t root, const std::filesystem::path& proc = "/proc");

}  // namespace fiberrun
