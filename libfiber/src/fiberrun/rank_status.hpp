// What each rank's program did, as fiberrun's rank supervisor records it in a status folder
// that fiberrun creates on its node: one file per rank, "running PID" while the program runs,
// then "exit N" or "signal N". mpirun cannot say it: with recovery on (so that a lost worker
// does not end the job) it exits 0 whatever its processes did.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>

namespace fiberrun {

struct RankState {
  enum class Kind { running, exited, signaled };
  Kind kind = Kind::running;
  int value = 0;  // the program's pid, its exit code or the signal that ended it

  // The status a shell would give: the exit code, or 128 + the signal.
  int shell_status() const;
};

// Writes a rank's state (atomically: readers see the old or the new one). Fails silently when
// the folder is not there, e.g. for a rank on another node.
void write_rank_state(const std::filesystem::path& folder, int rank, const RankState& state);

// Every rank's state so far, by rank.
std::map<int, RankState> read_rank_states(const std::filesystem::path& folder);

// The status fiberrun returns: that of the lowest rank that failed, or 0. A rank still
// "running" once the job is over lost its supervisor: it counts as killed by SIGKILL.
int job_status(const std::map<int, RankState>& ranks);

// One line for a rank that a signal ended ("killed by SIGKILL (exit 137)"), else empty.
std::string describe_signal(const RankState& state);

}  // namespace fiberrun
