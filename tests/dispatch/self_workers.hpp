// Worker records that lead back to this process (each over its own duplicate of MPI_COMM_SELF),
// for tests and benchmarks of the master's dispatch without worker processes.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "dispatch/worker_set.hpp"
#include "mpi/error.hpp"

namespace fiber::detail::self_workers {

// Adopts a worker record, parked; with `post_receive` its receive is posted, so that polls test
// it. Its id.
inline int adopt(WorkerSet& workers, bool post_receive = false) {
  MPI_Comm comm = MPI_COMM_NULL;
  mpi::check(MPI_Comm_dup(MPI_COMM_SELF, &comm), "MPI_Comm_dup");
  auto worker = std::make_unique<Worker>(std::make_shared<SpawnGroup>(comm), 0);
  MPI_Request receive = MPI_REQUEST_NULL;
  if (post_receive) worker->channel.post_receive(&receive);
  return workers.adopt({std::move(worker), receive});
}

// Reads what was sent to the records, so that their communicators can be disconnected.
inline void drain(const WorkerSet& workers) {
  for (const auto& worker : workers.all()) {
    MPI_Comm comm = worker->group->comm.get();
    for (;;) {
      int waiting = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &waiting, &status);
      if (!waiting) break;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      std::vector<char> bytes(static_cast<std::size_t>(count));
      MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm,
               MPI_STATUS_IGNORE);
    }
    worker->channel.wait_sends();
  }
}

}  // namespace fiber::detail::self_workers
