// What a shaped worker gets on its node (fiber::WorkerShape): the master gives each new worker,
// once it has said where it runs and what its node offers, cores and devices that no other live
// worker of that node holds. Open MPI places the processes (by slots) and fiber binds them: Open
// MPI 4.1.4's own binding (map_by slot:PE=n) refuses a node with fewer free cores than asked and
// then leaves mpirun hanging, and bind_to none makes it count one slot per process whatever n
// (docs/platform.md, "Binding workers to cores").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fiber/pool.hpp"

namespace fiber::detail {

// A worker's shape and what it was given for it.
struct Placement {
  WorkerShape shape;
  std::vector<int> cpus;  // bound to these (empty: not bound)
  std::vector<int> gpus;  // its devices
};

// What a node offers shaped workers, as its worker said (Hello).
struct NodeOffer {
  std::string host;
  std::vector<int> cpus;
  std::vector<int> gpus;
};

// The placement of a worker of `shape` on `node`, whose live workers hold `taken`: the first
// free cores and devices of the node's lists. Empty if the node lacks them; then `missing` says
// what ("nodeB has 1 of its 2 cores free, a worker needs 2").
std::optional<Placement> place(const WorkerShape& shape, const NodeOffer& node,
                               const std::vector<const Placement*>& taken, std::string& missing);

// How many of the job's slots a worker of `shape` takes: its cores, at least one.
int slots_of(const WorkerShape& shape);

// "4 cores, 8 GiB, 1 GPU": a shape for messages.
std::string describe(const WorkerShape& shape);

}  // namespace fiber::detail
