// When a silent worker is taken for lost. A worker that runs its tasks in a task process sends
// heartbeats; one silent for longer than the pool's worker_timeout is taken for lost. When losses
// follow each other closely the silence needed doubles (an overloaded node starves workers that
// are alive, and replacing them would only add processes), up to kMaxScale times the timeout,
// and goes back to once the timeout after a calm period. Pure logic on the times given.
#pragma once

#include <chrono>

#include "fiber/detail/job.hpp"

namespace fiber::detail {

class SilenceWatch {
 public:
  // At most this many times worker_timeout of silence before a worker is taken for lost...
  static constexpr int kMaxScale = 32;
  // ... back to once worker_timeout when no worker was lost for this many times worker_timeout.
  static constexpr int kCalmAfter = 30;
  // Losses within this many times the current timeout of the previous one are "close".
  static constexpr int kCloseLosses = 3;

  // The silence after which a worker of a pool with `worker_timeout` is taken for lost, now.
  Clock::duration allowed(Clock::duration worker_timeout, Clock::time_point now);
  // A worker was taken for lost at `now` (after allowed() was `timeout`); true if the allowed
  // silence was raised because of it.
  bool on_loss(Clock::time_point now, Clock::duration timeout);
  int scale() const { return scale_; }

 private:
  int scale_ = 1;
  Clock::time_point last_loss_{};
};

}  // namespace fiber::detail
