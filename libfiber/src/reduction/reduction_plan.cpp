#include "reduction/reduction_plan.hpp"

#include <algorithm>
#include <map>

namespace fiber::detail {

std::vector<ReductionBlock> plan_reduction(std::size_t items, std::vector<HostWorkers> hosts,
                                           std::size_t chunksize) {
  std::map<std::string, std::size_t> workers_of;  // sorted by host name
  std::size_t total_workers = 0;
  for (const auto& [host, workers] : hosts) {
    if (workers <= 0) continue;
    workers_of[host] += static_cast<std::size_t>(workers);
    total_workers += static_cast<std::size_t>(workers);
  }
  if (workers_of.empty()) {
    workers_of[""] = 1;
    total_workers = 1;
  }
  std::vector<ReductionBlock> blocks;
  std::size_t workers_before = 0;
  for (const auto& [host, workers] : workers_of) {
    std::size_t first = items * workers_before / total_workers;
    workers_before += workers;
    std::size_t end = items * workers_before / total_workers;
    if (end == first) continue;
    std::size_t count = end - first;
    std::size_t size = chunksize;
    if (size == 0) {
      std::size_t chunks = workers * kReductionChunksPerWorker;
      size = (count + chunks - 1) / chunks;
    }
    ReductionBlock block{host, first, {}};
    for (std::size_t at = size; at < count + size; at += size) {
      block.chunk_ends.push_back(std::min(at, count));
    }
    blocks.push_back(std::move(block));
  }
  return blocks;
}

}  // namespace fiber::detail
