// The runtime's side of one fiber::Pool.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "fiber/detail/job.hpp"
#include "fiber/pool.hpp"

namespace fiber::detail {

class PoolHandle {
 public:
  explicit PoolHandle(PoolOptions pool_options) : options(std::move(pool_options)) {}

  const PoolOptions options;

  // The dispatcher thread's state.
  std::vector<int> workers;                // ids of the workers this pool holds
  std::deque<std::shared_ptr<Job>> queue;  // jobs with items not yet sent
  bool terminated = false;

  // Readable from the pool's thread.
  mutable std::mutex info_mutex;
  std::vector<WorkerInfo> worker_infos;
};

}  // namespace fiber::detail
