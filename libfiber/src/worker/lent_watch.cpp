#include "worker/lent_watch.hpp"

#include <algorithm>

namespace fiber::detail {

std::chrono::milliseconds LentWatch::nap(bool mpi_busy, bool task_busy,
                                         Clock::time_point now) const {
  if (mpi_busy || now - last_message_ < kAwake) return kPoll;
  if (!task_busy) return idle_nap();
  return std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(heartbeat_ / 2), kPoll,
                    std::chrono::milliseconds(kNap));
}

std::chrono::milliseconds LentWatch::idle_nap() const {
  return std::clamp(
      std::chrono::duration_cast<std::chrono::milliseconds>(heartbeat_ * kIdleNapHeartbeats), kPoll,
      std::chrono::milliseconds(kIdleNap));
}

bool LentWatch::look(bool task_busy, Clock::time_point last_sent, Clock::time_point now) {
  const bool stalled = now - last_look_ > idle_nap() + heartbeat_;
  last_look_ = now;
  return (task_busy || stalled) && now - last_sent >= heartbeat_;
}

}  // namespace fiber::detail
