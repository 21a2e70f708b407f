// What runs where: the pools' queues of jobs, cut into chunks (chunk_policy) and handed to their
// workers, a few in flight per worker (a pull with prefetch: a result is the worker's request for
// more); items without an answer sent again, or failed once they failed too often; a pool's work
// failed when it is terminated. The worker set moves the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "dispatch/chunk_policy.hpp"
#include "dispatch/worker_set.hpp"
#include "fiber/task.hpp"

namespace fiber::detail {

class Scheduler {
 public:
  explicit Scheduler(WorkerSet& workers) : workers_(workers) {}

  TaskTimings& timings() { return timings_; }

  void enqueue(PoolHandle& pool, std::shared_ptr<Job> job);
  // Hands queued chunks to the pools' workers; true if any was sent. Only the workers listed in a
  // pool's idle and answered lists are looked at: a step costs what changed, not the pool's size.
  bool dispatch(const std::vector<std::shared_ptr<PoolHandle>>& pools, Clock::time_point now);
  // Sends `call` alone to worker `id` of `pool`; the job to wait for (driven by `driver`).
  std::shared_ptr<Job> send_call(int id, const std::shared_ptr<PoolHandle>& pool, const Call& call,
                                 std::uint32_t flags, ProgressDriver* driver,
                                 Clock::time_point now);

  // Sends items [first, first + count) of a chunk again, with no failure counted.
  void requeue(const InFlight& chunk, std::size_t first, std::size_t count);
  // Item `item` of a chunk failed without an answer (crash, timeout, lost worker): it is tried
  // again, or given up with `error` once it failed more than the pool's max_retries times.
  void retry_or_fail(const InFlight& chunk, std::size_t item, const std::exception_ptr& error);
  // The chunks of a worker taken for lost (`why`): the first item of each is counted as failed
  // (which one killed it is unknown), the rest are sent again.
  void reschedule_lost(const std::deque<InFlight>& chunks, const std::string& why);

  // Fails the pool's pending work with PoolClosed and has its workers drop what they hold.
  void terminate(PoolHandle& pool);
  // Fails every queued job of the pools with `error` and empties their queues.
  static void fail_queued(const std::vector<std::shared_ptr<PoolHandle>>& pools,
                          const std::exception_ptr& error);

 private:
  // Whether a worker may hold more than one chunk (it answered just now).
  enum class Prefetch { no, yes };
  // What fill() did: whether it sent chunks, and whether it stopped at the worker's limit (rather
  // than at the end of the queue or of a batch).
  struct Filled {
    bool sent = false;
    bool full = false;
  };

  // Whether worker `id` is still one of the pool's (an entry of its lists may be out of date).
  bool holds(const PoolHandle& pool, int id);
  // The first of the pool's queued jobs that `worker` may take: one for any host, for its host,
  // or for a host where the pool has no worker left.
  std::deque<std::shared_ptr<ScheduledJob>>::iterator next_for(PoolHandle& pool,
                                                               const Worker& worker);
  // Sends the pool's next chunks to worker `id` up to its limit, in one batch where they are small.
  Filled fill(const std::shared_ptr<PoolHandle>& pool, int id, Prefetch prefetch,
              Clock::time_point now);

  WorkerSet& workers_;
  TaskTimings timings_;
};

}  // namespace fiber::detail
