// A sleep that a descriptor ends: ppoll, whose timeout is finer than poll's milliseconds (a
// worker's first naps after its spin are a fraction of a millisecond, backoff.hpp).
#pragma once

#include <poll.h>

#include <chrono>
#include <ctime>

namespace fiber::posix {

// Sleeps until `fd` is readable or `timeout` passes (a signal may end it sooner); true if
// readable.
inline bool wait_readable(int fd, std::chrono::nanoseconds timeout) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec limit{static_cast<std::time_t>(seconds.count()),
                       static_cast<long>((timeout - seconds).count())};
  pollfd watched{fd, POLLIN, 0};
  return ::ppoll(&watched, 1, &limit, nullptr) > 0 && (watched.revents & POLLIN);
}

}  // namespace fiber::posix
