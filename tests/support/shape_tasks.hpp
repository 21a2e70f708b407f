// Tasks that report what a worker's shape gave the task process running them (registered in
// shape_tasks.cpp): the worker shape tests, on this machine and on simulated nodes.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace fiber_test {

// What one task process saw, after sleeping `milliseconds` (so that each worker of a pool takes
// one of a map's items): [host, its CPUs (Cpus_allowed_list), its worker's CPUs, OMP_NUM_THREADS,
// CUDA_VISIBLE_DEVICES, its worker's pid]; a variable not set is "-".
std::vector<std::string> seen_by_task(int milliseconds);
// Fills `bytes` bytes and returns how many it filled.
std::size_t fill_bytes(std::size_t bytes);

// The numbers of a list such as "0-2,5" (Cpus_allowed_list, CUDA_VISIBLE_DEVICES).
std::set<int> numbers_in(const std::string& list);

}  // namespace fiber_test
