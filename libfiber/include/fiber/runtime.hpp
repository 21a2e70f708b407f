/// \file
/// fiber::Runtime: the first line of main.
///
///   int main(int argc, char** argv) {
///     fiber::Runtime runtime(argc, argv);
///     ...
///   }
///
/// In the master (the process the user started, alone, under mpirun or under fiberrun) it starts
/// MPI with the settings this stack needs, unless the environment already sets them: run as root,
/// UCX for spawned processes, recovery from dead processes, yield when idle, and, when the job
/// runs on this machine alone, oversubscription and loopback-only TCP. It owns the worker
/// processes: pools borrow them, and they end when the Runtime ends.
///
/// In a worker (the same binary, spawned by a pool) the constructor serves tasks until the master's
/// Runtime ends, then exits the process: user code after it never runs there.
///
/// A master that is not the program its workers should run (a Python interpreter, whose workers
/// run fiber's worker module rather than the user's script) says what they run instead:
///
///   fiber::Runtime runtime(argc, argv, {.worker_arguments = {{"-m", "fiber._worker"}}});
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fiber/errors.hpp"
#include "fiber/export.hpp"

namespace fiber {

/// What a Runtime's workers run, when not this program with the master's arguments.
struct RuntimeOptions {
  /// The program spawned workers run, as a path; empty: this program (/proc/self/exe).
  std::string worker_program{};
  /// Their arguments, without argv[0]; unset: the master's own.
  std::optional<std::vector<std::string>> worker_arguments{};
};

/// fiber in this process: MPI, the worker processes and the dispatcher (see the file's
/// description). One per process, for the whole of main.
class FIBER_EXPORT Runtime {
 public:
  /// Starts fiber; in a worker, serves tasks and exits instead of returning. Throws fiber::Error
  /// if a Runtime already ran in this process.
  Runtime(int argc, char** argv);
  /// As Runtime(argc, argv), with workers that run what `options` says.
  Runtime(int argc, char** argv, const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Workers the runtime has started so far (busy in pools or parked).
  int worker_count() const;
  /// Processor slots for workers: what PoolOptions::processes = 0 means.
  int default_pool_size() const;
};

/// In a task: where it runs. In the master: id -1 and the master's host and pid.
FIBER_EXPORT const WorkerInfo& this_worker();

}  // namespace fiber
