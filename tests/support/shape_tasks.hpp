// Tasks that report what a worker's shape gave the task process running them (registered in
// shape_tasks.cpp): the worker shape tests, on this machine and on simulated nodes.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace fiber {
class Pool;
}

namespace fiber_test {

// The fields of what seen_by_task returns.
enum Seen { kHost, kTaskCpus, kWorkerCpus, kThreads, kDevices, kWorkerPid };

// What one task process saw, after sleeping `milliseconds` (so that each worker of a pool takes
// one of a map's items): [host, its CPUs (Cpus_allowed_list), its worker's CPUs, OMP_NUM_THREADS,
// CUDA_VISIBLE_DEVICES, its worker's pid]; a variable not set is "-".
std::vector<std::string> seen_by_task(int milliseconds);
// What each worker of `pool` saw, one task each, every task holding its worker `hold_ms` (long
// enough that each idle worker takes one item before any is free again); a worker that took two
// items fails the test.
std::vector<std::vector<std::string>> seen_by_each_worker(fiber::Pool& pool, int hold_ms);
// Fills `bytes` bytes and returns how many it filled.
std::size_t fill_bytes(std::size_t bytes);

// The numbers of a list such as "0-2,5" (Cpus_allowed_list, CUDA_VISIBLE_DEVICES).
std::set<int> numbers_in(const std::string& list);

}  // namespace fiber_test
