#include "fiberrun/job_end_watch.hpp"

#include <algorithm>

namespace fiberrun {

JobEndWatch::JobEndWatch(Clock::time_point when, std::size_t processes)
    : deadline_(when + kQuietGrace + kGracePerProcess * static_cast<long>(processes)),
      fewest_(processes) {}

void JobEndWatch::look(Clock::time_point now, std::size_t processes) {
  if (processes >= fewest_) return;
  fewest_ = processes;
  deadline_ = std::max(deadline_, now + kQuietGrace);
}

bool JobEndWatch::overdue(Clock::time_point now) const { return now > deadline_; }

}  // namespace fiberrun
