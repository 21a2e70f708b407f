// A worker's side of its shape (fiber::WorkerShape): what it tells the master its node offers
// (in its hello), and what it does with what the master gives it (in its welcome): binds itself
// to its cores, tells thread pools how many they have and CUDA which devices are its own. The
// task process it forks inherits all of it; its memory limit is the task process's
// (task_process.cpp).
#pragma once

#include <string>

namespace fiber::detail {

// The CPUs this process may run on, as a list ("0-3" as "0,1,2,3"): a shaped worker is spawned
// unbound, so these are its node's (its daemon's) CPUs.
std::string offered_cpus();
// The devices of this node, as a list: FIBER_GPUS (a list for every node, "0,1", or one per
// host, "nodeA=0,1 nodeB=2" or with ';' between, a host not named having none), else
// SLURM_STEP_GPUS, else SLURM_JOB_GPUS; empty if none says. A list that does not parse is a
// warning of each worker there, and offers none.
std::string offered_gpus(const std::string& host);

// Binds every thread of this process to `cpus` (a list; empty: left as it is), sets
// OMP_NUM_THREADS and the other thread pools' variables to `threads` unless they are set (0:
// untouched), and CUDA_VISIBLE_DEVICES to `gpus` when it names any.
void take_shape(const std::string& cpus, const std::string& gpus, unsigned threads);

}  // namespace fiber::detail
