// How the master obtains workers, kept apart from what it does with them (mpi4py.futures keeps
// its process management apart from the scheduling loop the same way): MPI_Comm_spawn of this
// program, one process per call so that each can be handled alone (docs/platform.md, "A
// disconnect acts on a whole spawn"), and the hello/welcome handshake that makes it a worker.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "dispatch/worker_record.hpp"

namespace fiber::detail {

class WorkerSpawner {
 public:
  // `worker_argv`: the arguments workers get (the master's own, without argv[0]).
  explicit WorkerSpawner(std::vector<std::string> worker_argv);

  struct Spawned {
    std::unique_ptr<Worker> worker;
    MPI_Request receive;  // its first receive, posted: the caller owns it from now on
  };
  // Starts worker `id` while `live` processes of the job run (the master included) and waits for
  // its hello; fiber::SpawnError if it cannot be started or does not answer.
  Spawned spawn(int id, int live);

 private:
  const std::vector<std::string> worker_argv_;
  const std::string executable_;
};

}  // namespace fiber::detail
