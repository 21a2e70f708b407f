// A std::chrono duration as the timespec that POSIX waits take (ppoll, futex, futex_waitv).
#pragma once

#include <chrono>
#include <ctime>

namespace fiber::posix {

inline timespec to_timespec(std::chrono::nanoseconds duration) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(duration);
  return timespec{static_cast<std::time_t>(seconds.count()),
                  static_cast<long>((duration - seconds).count())};
}

}  // namespace fiber::posix
