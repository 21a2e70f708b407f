#include "dispatch/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <tuple>

#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

// Chunks are queued behind a running one only for a worker that answered this recently: one
// stuck in a long item must not collect work that another could start.
constexpr auto kAnsweringWithin = std::chrono::milliseconds(1);

}  // namespace

void Scheduler::enqueue(PoolHandle& pool, std::shared_ptr<Job> job) {
  pool.queue.push_back(std::make_shared<ScheduledJob>(std::move(job)));
  pool.queue.back()->sequence = pool.submitted++;
}

bool Scheduler::dispatch(const std::vector<std::shared_ptr<PoolHandle>>& pools,
                         Clock::time_point now) {
  bool sent = false;
  for (const auto& pool : pools) {
    if (pool->terminated) continue;
    // First every idle worker gets a chunk (one whose jobs all wait for other hosts stays idle)...
    std::vector<int> still_idle;
    while (!pool->queue.empty() && !pool->idle.empty()) {
      int id = pool->idle.pop();
      if (!holds(*pool, id) || !workers_[id].in_flight.empty()) continue;
      bool filled = fill(pool, id, Prefetch::no, now).sent;
      if (!filled) still_idle.push_back(id);
      sent |= filled;
    }
    for (int id : still_idle) pool->idle.push(id);
    // ... then those that answered just now fill their queues, each once per step (the list is
    // taken as it was: one that is put back is looked at again in the next step).
    for (std::size_t listed = pool->answered.size(); listed > 0 && !pool->queue.empty(); --listed) {
      int id = pool->answered.pop();
      if (!holds(*pool, id) || now - workers_[id].last_result >= kAnsweringWithin) continue;
      Filled filled = fill(pool, id, Prefetch::yes, now);
      sent |= filled.sent;
      // Full, it is listed again by its next answer; else it may take more while it answers.
      if (!filled.full) pool->answered.push(id);
    }
  }
  return sent;
}

bool Scheduler::holds(const PoolHandle& pool, int id) {
  const Worker& worker = workers_[id];
  return worker.pool.get() == &pool && !worker.dead;
}

std::deque<std::shared_ptr<ScheduledJob>>::iterator Scheduler::next_for(PoolHandle& pool,
                                                                        const Worker& worker) {
  return std::find_if(pool.queue.begin(), pool.queue.end(), [&](const auto& scheduled) {
    const std::string& host = scheduled->state().host();
    return host.empty() || host == worker.info.host || !pool.workers_on_host.contains(host);
  });
}

Scheduler::Filled Scheduler::fill(const std::shared_ptr<PoolHandle>& pool, int id,
                                  Prefetch prefetch, Clock::time_point now) {
  Worker& worker = workers_[id];
  Batch batch(MessageKind::run);
  Filled filled;
  while (!pool->queue.empty() && !batch.full()) {
    auto next = next_for(*pool, worker);
    if (next == pool->queue.end()) break;
    auto scheduled = *next;
    const JobState& job = scheduled->state();
    const TaskTiming* timing = timings_.of(job.timed_as());
    std::size_t remaining = job.size() - scheduled->next_unsent;
    std::size_t next_size =
        chunk_policy::chunk_size(job.chunksize(), remaining, pool->workers.size(), timing);
    std::size_t first, count;
    if (!scheduled->requeued.empty()) {
      std::tie(first, count) = scheduled->requeued.front();
    } else {
      first = scheduled->next_unsent;
      count = next_size;
    }
    bool answering = now - worker.last_result < kAnsweringWithin;
    std::size_t limit =
        prefetch == Prefetch::no || !answering ? 1 : chunk_policy::in_flight_limit(timing, count);
    if (worker.in_flight.size() >= limit) {
      filled.full = true;
      break;
    }
    if (!scheduled->requeued.empty()) {
      count = std::min(count, std::max<std::size_t>(1, next_size));
      auto& range = scheduled->requeued.front();
      range.first += count;
      range.second -= count;
      if (range.second == 0) scheduled->requeued.pop_front();
    } else {
      scheduled->next_unsent += count;
    }
    if (!scheduled->has_unsent()) pool->queue.erase(next);
    workers_.send_chunk(id, pool, scheduled, first, count, 0, &batch, now);
    filled.sent = true;
  }
  workers_.send(id, batch);
  return filled;
}

std::shared_ptr<Job> Scheduler::send_call(int id, const std::shared_ptr<PoolHandle>& pool,
                                          const Call& call, std::uint32_t flags,
                                          ProgressDriver* driver, Clock::time_point now) {
  auto job = std::make_shared<Job>(call.task, call.arguments,
                                   std::vector<std::uint64_t>{0, call.arguments.size()}, 1);
  job->state().drive_with(driver);
  auto scheduled = std::make_shared<ScheduledJob>(job);
  scheduled->next_unsent = 1;
  workers_.send_chunk(id, pool, scheduled, 0, 1, flags, nullptr, now);
  return job;
}

void Scheduler::requeue(const InFlight& chunk, std::size_t first, std::size_t count) {
  if (count == 0) return;
  PoolHandle& pool = *chunk.pool;
  if (pool.terminated || pool.released) {
    chunk.job->job->state().fail_pending(std::make_exception_ptr(
        PoolClosed("fiber: the pool ended before this task could be run again")));
    return;
  }
  bool queued = chunk.job->has_unsent();
  chunk.job->requeued.emplace_back(first, count);
  if (!queued) pool.queue.push_front(chunk.job);  // retries go first
}

void Scheduler::retry_or_fail(const InFlight& chunk, std::size_t item,
                              const std::exception_ptr& error) {
  int& failures = chunk.job->failed_attempts[item];
  if (++failures > chunk.pool->options.max_retries) {
    ++chunk.pool->counters.completed;
    ++chunk.pool->counters.failed;
    JobState::ItemResult failure{false, 0, 0, error};
    chunk.job->state().store(item, std::span(&failure, 1), nullptr);
    return;
  }
  ++chunk.pool->counters.retried;
  requeue(chunk, item, 1);
}

void Scheduler::reschedule_lost(const std::deque<InFlight>& chunks, const std::string& why) {
  for (const auto& chunk : chunks) {
    auto error = std::make_exception_ptr(WorkerLost(
        fmt::format("fiber: task '{}' was running when its worker was lost {} times; the last: {}",
                    chunk.job->job->task(), chunk.pool->options.max_retries + 1, why)));
    retry_or_fail(chunk, chunk.first, error);
    requeue(chunk, chunk.first + 1, chunk.count - 1);
  }
}

void Scheduler::terminate(PoolHandle& pool) {
  pool.terminated = true;
  auto error = std::make_exception_ptr(
      PoolClosed("fiber: the pool was terminated before this task finished"));
  for (auto& scheduled : pool.queue) scheduled->job->state().fail_pending(error);
  pool.queue.clear();
  for (int id : pool.workers) {
    Worker& worker = workers_[id];
    for (auto& chunk : worker.in_flight) chunk.job->job->state().fail_pending(error);
    if (!worker.in_flight.empty()) workers_.send(id, MessageKind::drop);
  }
}

void Scheduler::fail_queued(const std::vector<std::shared_ptr<PoolHandle>>& pools,
                            const std::exception_ptr& error) {
  for (const auto& pool : pools) {
    for (auto& scheduled : pool->queue) scheduled->job->state().fail_pending(error);
    pool->queue.clear();
  }
}

}  // namespace fiber::detail
