// The runtime's side of one fiber::Pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "dispatch/worker_queue.hpp"
#include "fiber/detail/job.hpp"
#include "fiber/pool.hpp"

namespace fiber::detail {

struct ScheduledJob;  // dispatch/scheduled_job.hpp

class PoolHandle {
 public:
  explicit PoolHandle(PoolOptions pool_options) : options(std::move(pool_options)) {}

  const PoolOptions options;

  // The dispatcher's state (touched only in its rounds, under the progress lock).
  std::vector<int> workers;                         // ids of the workers this pool holds
  std::deque<std::shared_ptr<ScheduledJob>> queue;  // jobs with items not yet sent
  std::vector<Call> broadcasts;  // the latest broadcast of each task, for new workers
  // Whom the scheduler gives work to, without a scan of the pool: its workers that had nothing in
  // flight when listed (in the order they became idle), and those that answered since the
  // scheduler last looked at them (they may take more chunks in advance).
  WorkerQueue idle;
  WorkerQueue answered;
  int target = 0;             // workers it should have (resize, autoscaling)
  int autoscale_ceiling = 0;  // max_workers, lowered if spawning fails
  bool terminated = false;
  bool released = false;

  // Readable from the pool's thread.
  mutable std::mutex info_mutex;
  std::vector<WorkerInfo> worker_infos;
  struct Counters {
    std::atomic<std::uint64_t> completed{0}, failed{0}, retried{0}, crashes{0}, timeouts{0},
        workers_lost{0};
  } counters;
};

}  // namespace fiber::detail
