// How the master obtains workers, kept apart from what it does with them (mpi4py.futures keeps
// its process management apart from the scheduling loop the same way): MPI_Comm_spawn of this
// program, several workers in one call (docs/platform.md, "A batch from one spawn survives the
// loss of one member": each stays a worker of its own, parked, replaced and accounted alone), and
// the hello/welcome handshake that makes each a worker.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/worker_record.hpp"

namespace fiber::detail {

class WorkerSpawner {
 public:
  // `worker_argv`: the arguments workers get (the master's own, without argv[0]);
  // `worker_program`: what they run (empty: this program).
  explicit WorkerSpawner(std::vector<std::string> worker_argv, std::string worker_program = {});

  struct Spawned {
    std::unique_ptr<Worker> worker;
    MPI_Request receive;  // its first receive, posted: the caller owns it from now on
  };
  // Starts workers `first_id` .. `first_id + count - 1` of `shape` with one MPI_Comm_spawn while
  // the job's live processes take `live` slots (the master included) and waits for their
  // hellos; fiber::SpawnError if they cannot be started or one does not answer. The caller
  // welcomes each (Welcome: its id and what it gets for its shape).
  std::vector<Spawned> spawn(int first_id, int count, int live, const WorkerShape& shape);
  // How many more slots the job has while its live processes take `live`; nothing if there is
  // no limit (oversubscription allowed, or a singleton, where MPI itself says no).
  static std::optional<int> free_slots(int live);

 private:
  const std::vector<std::string> worker_argv_;
  const std::string executable_;
};

}  // namespace fiber::detail
