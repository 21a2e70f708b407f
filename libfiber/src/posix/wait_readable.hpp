// A sleep that a descriptor ends: ppoll, whose timeout is finer than poll's milliseconds (a
// worker's first naps after its spin are a fraction of a millisecond, backoff.hpp).
#pragma once

#include <poll.h>

#include <chrono>
#include <ctime>

#include "posix/timespec.hpp"

namespace fiber::posix {

// Sleeps until `fd` is readable or `timeout` passes (a signal may end it sooner); true if
// readable.
inline bool wait_readable(int fd, std::chrono::nanoseconds timeout) {
  const timespec limit = to_timespec(timeout);
  pollfd watched{fd, POLLIN, 0};
  return ::ppoll(&watched, 1, &limit, nullptr) > 0 && (watched.revents & POLLIN);
}

}  // namespace fiber::posix
