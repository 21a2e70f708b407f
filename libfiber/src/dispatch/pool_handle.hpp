// The runtime's side of one fiber::Pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/worker_queue.hpp"
#include "fiber/detail/job.hpp"
#include "fiber/pool.hpp"

namespace fiber::detail {

struct ScheduledJob;  // dispatch/scheduled_job.hpp

class PoolHandle {
 public:
  explicit PoolHandle(PoolOptions pool_options)
      : options(std::move(pool_options)),
        ahead_initializer(options.initializer && options.initializer_runs_ahead
                              ? std::make_shared<const Call>(*options.initializer)
                              : nullptr) {}

  const PoolOptions options;
  // The initializer, if it runs ahead (PoolOptions::initializer_runs_ahead): kept by the workers
  // that ran it (Worker::kept_initializer), shared rather than copied per worker.
  const std::shared_ptr<const Call> ahead_initializer;

  // The dispatcher's state (touched only in its rounds, under the progress lock).
  std::vector<int> workers;                              // ids of the workers this pool holds
  std::unordered_map<std::string, int> workers_on_host;  // of those, how many on each host
  std::deque<std::shared_ptr<ScheduledJob>> queue;       // jobs with items not yet sent
  // A broadcast call, its arguments encoded once and shared by every worker's job.
  struct SharedCall {
    std::string task;
    std::shared_ptr<const Bytes> arguments;
  };
  std::vector<SharedCall> broadcasts;  // the latest broadcast of each task, for new workers
  // Jobs and broadcasts submitted so far (ScheduledJob::sequence), and where the latest
  // Pool::broadcast began (its jobs, and replays of it, come from there on).
  std::uint64_t submitted = 0;
  std::uint64_t latest_broadcast = 0;
  // The error of a broadcast that failed on a worker: every later call of the pool fails with it
  // until the next broadcast.
  std::exception_ptr broadcast_failure;
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
