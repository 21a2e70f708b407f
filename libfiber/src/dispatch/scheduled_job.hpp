// A job as the scheduler sees it: which of its items are still to be sent, and how often each
// failed. Only the dispatcher touches it (under its progress lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "caller/job_state.hpp"
#include "dispatch/pool_handle.hpp"
#include "fiber/detail/job.hpp"

namespace fiber::detail {

struct ScheduledJob {
  explicit ScheduledJob(std::shared_ptr<Job> submitted) : job(std::move(submitted)) {}

  std::shared_ptr<Job> job;
  std::size_t next_unsent = 0;  // items before it have been cut into chunks
  // Items to send again (first, count): after a crash, a timeout or a lost worker.
  std::deque<std::pair<std::size_t, std::size_t>> requeued;
  std::unordered_map<std::size_t, int> failed_attempts;  // item -> crashes and timeouts so far
  // Its pool's count of jobs and broadcasts submitted before it: which jobs a failed broadcast
  // makes fail (those after it).
  std::uint64_t sequence = 0;
  bool broadcast = false;  // one worker's run of a Pool::broadcast call

  JobState& state() const { return job->state(); }
  bool has_unsent() const { return next_unsent < job->size() || !requeued.empty(); }
  // Items waiting to be sent.
  std::size_t backlog() const {
    std::size_t items = job->size() - next_unsent;
    for (const auto& range : requeued) items += range.second;
    return items;
  }
};

// One worker's run of a broadcast: a job of one item over the call's shared arguments, counted
// in its pool's sequence.
inline std::shared_ptr<ScheduledJob> broadcast_job(PoolHandle& pool,
                                                   const PoolHandle::SharedCall& call,
                                                   ProgressDriver* driver) {
  auto offsets = std::vector<std::uint64_t>{0, call.arguments->size()};
  auto state = std::make_unique<JobState>(call.task, call.arguments, std::move(offsets), 1);
  state->drive_with(driver);
  auto scheduled = std::make_shared<ScheduledJob>(std::make_shared<Job>(std::move(state)));
  scheduled->next_unsent = 1;
  scheduled->sequence = pool.submitted++;
  scheduled->broadcast = true;
  return scheduled;
}

}  // namespace fiber::detail
