// The worker side: what a spawned process does inside fiber::Runtime's constructor.
#pragma once

#include <mpi.h>

namespace fiber::detail {

// Serves tasks from the master until it says shutdown, then finalizes MPI and exits the process.
[[noreturn]] void serve_as_worker(MPI_Comm parent);

}  // namespace fiber::detail
