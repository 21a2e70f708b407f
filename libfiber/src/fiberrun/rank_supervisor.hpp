// fiberrun's rank supervisor: mpirun starts it in place of the program (fiberrun
// --fiberrun-supervise-rank FOLDER PROGRAM ARGS...); it runs the program as its child, in the
// same process group, and records in FOLDER what the program did (rank_status.hpp). A program
// that cannot be started gives one line and 127 (not found) or 126 (not executable), as in a
// shell, instead of mpirun's hang. Signals meant for the program go to the program itself
// (fiberrun sends them to the pid recorded here; Open MPI signals the whole process group).
#pragma once

#include <csignal>
#include <filesystem>
#include <span>
#include <string_view>

namespace fiberrun {

inline constexpr std::string_view kSuperviseRankFlag = "--fiberrun-supervise-rank";

// Runs `program` and returns its shell status. `unblocked` is the signal mask the program
// starts with.
int supervise_rank(const std::filesystem::path& folder, std::span<char* const> program,
                   const sigset_t& unblocked);

}  // namespace fiberrun
