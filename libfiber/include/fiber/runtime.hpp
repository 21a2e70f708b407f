// fiber::Runtime: the first line of main.
//
//   int main(int argc, char** argv) {
//     fiber::Runtime runtime(argc, argv);
//     ...
//   }
//
// In the master (the process the user started, alone, under mpirun or under fiberrun) it starts
// MPI with the settings this stack needs, unless the environment already sets them: run as root,
// UCX for spawned processes, recovery from dead processes, yield when idle, and, when the job
// runs on this machine alone, oversubscription and loopback-only TCP. It owns the worker
// processes: pools borrow them, and they end when the Runtime ends.
//
// In a worker (the same binary, spawned by a pool) the constructor serves tasks until the master's
// Runtime ends, then exits the process: user code after it never runs there.
#pragma once

#include "fiber/errors.hpp"
#include "fiber/export.hpp"

namespace fiber {

class FIBER_EXPORT Runtime {
 public:
  Runtime(int argc, char** argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Workers the runtime has started so far (busy in pools or parked).
  int worker_count() const;
  // Processor slots for workers: what PoolOptions::processes = 0 means.
  int default_pool_size() const;
};

// In a task: where it runs. In the master: id -1 and the master's host and pid.
FIBER_EXPORT const WorkerInfo& this_worker();

}  // namespace fiber
