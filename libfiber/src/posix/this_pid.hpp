// getpid() without a system call each time (glibc stopped caching it): the queue client asks on
// every call whether it runs in a forked child of the process that made its state.
#pragma once

#include <pthread.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace fiber::posix {

inline std::atomic<pid_t> cached_pid{0};

inline void refresh_cached_pid() { cached_pid.store(::getpid(), std::memory_order_relaxed); }

// This process's id, refreshed in the child of a fork().
inline pid_t this_pid() {
  static std::once_flag registered;
  std::call_once(registered, [] {
    refresh_cached_pid();
    ::pthread_atfork(nullptr, nullptr, refresh_cached_pid);
  });
  return cached_pid.load(std::memory_order_relaxed);
}

}  // namespace fiber::posix
