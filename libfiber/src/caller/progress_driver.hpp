// Makes progress on jobs from the thread that waits for them (the runtime's progress engine does),
// so that a waiting caller needs no other thread to hand it its results.
#pragma once

#include <functional>
#include <optional>

#include "fiber/detail/job.hpp"

namespace fiber::detail {

class ProgressDriver {
 public:
  // Makes progress on this thread until ready() or the deadline; false if this thread cannot
  // (then the waiter is woken by whoever makes progress).
  virtual bool drive(const std::function<bool()>& ready,
                     std::optional<Clock::time_point> deadline) = 0;

 protected:
  ~ProgressDriver() = default;
};

}  // namespace fiber::detail
