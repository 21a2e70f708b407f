// A job as the scheduler sees it: which of its items are still to be sent, and how often each
// failed. Only the dispatcher touches it (under its progress lock).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>

#include "fiber/detail/job.hpp"
#include "job_state.hpp"

namespace fiber::detail {

struct ScheduledJob {
  explicit ScheduledJob(std::shared_ptr<Job> submitted) : job(std::move(submitted)) {}

  std::shared_ptr<Job> job;
  std::size_t next_unsent = 0;  // items before it have been cut into chunks
  // Items to send again (first, count): after a crash, a timeout or a lost worker.
  std::deque<std::pair<std::size_t, std::size_t>> requeued;
  std::unordered_map<std::size_t, int> failed_attempts;  // item -> crashes and timeouts so far

  JobState& state() const { return job->state(); }
  bool has_unsent() const { return next_unsent < job->size() || !requeued.empty(); }
  // Items waiting to be sent.
  std::size_t backlog() const {
    std::size_t items = job->size() - next_unsent;
    for (const auto& range : requeued) items += range.second;
    return items;
  }
};

}  // namespace fiber::detail
