// A name for this run, the same in the master and all its workers (the master's host and pid):
// it keeps the shared memory of concurrent runs apart.
#pragma once

#include <string>

namespace fiber::detail {

// The run's name; in a worker, as the master sent it in its welcome.
const std::string& run_identity();
void set_run_identity(std::string identity);

// Removes the shared memory of the NodeArrays this process opened (at the end of the run).
void unlink_node_arrays();
// Removes the shared memory on this node that no live process uses (left by any run, e.g. one
// whose watcher was killed with the whole job step).
void unlink_stale_node_arrays();

}  // namespace fiber::detail
