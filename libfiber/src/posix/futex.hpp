// Futexes: a sleep that another thread or process ends by changing a 32-bit word. Shared (not
// FUTEX_PRIVATE_FLAG) unless said otherwise: the word may be in memory that several processes
// map, as the task rings' flags are (task_ring.hpp).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <span>

#include "posix/timespec.hpp"

namespace fiber::posix {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

// Sleeps while `word` holds `expected`, for at most `timeout` (a wake-up, a signal or a change
// before the call ends it sooner).
inline void futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) {
  const timespec relative = to_timespec(timeout);
  syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&word), FUTEX_WAIT, expected, &relative,
          nullptr, 0);
}

// Wakes one sleeper on `word`.
inline void futex_wake(std::atomic<std::uint32_t>& word, bool process_private = false) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          FUTEX_WAKE | (process_private ? FUTEX_PRIVATE_FLAG : 0), 1, nullptr, nullptr, 0);
}

// One word of a sleep on several (futex_wait_any).
struct FutexWatch {
  const std::atomic<std::uint32_t>* word;
  std::uint32_t expected;
  bool process_private = false;  // only threads of this process change it
};

// The most words one sleep can watch (the kernel's limit).
inline constexpr std::size_t kFutexWatchMax = FUTEX_WAITV_MAX;

// Sleeps while every word holds its expected value, for at most `timeout`: futex_waitv (Linux
// 5.16). A word whose memory is gone by the call only ends the sleep (EFAULT), so a caller may
// watch memory that another thread may unmap meanwhile, as long as it does not touch it itself.
// At most kFutexWatchMax words (more: no sleep).
inline void futex_wait_any(std::span<const FutexWatch> watches, std::chrono::nanoseconds timeout) {
  if (watches.empty() || watches.size() > kFutexWatchMax) return;
  futex_waitv waiters[kFutexWatchMax] = {};
  for (std::size_t i = 0; i < watches.size(); ++i) {
    waiters[i].uaddr = reinterpret_cast<std::uintptr_t>(watches[i].word);
    waiters[i].val = watches[i].expected;
    waiters[i].flags = FUTEX_32 | (watches[i].process_private ? FUTEX_PRIVATE_FLAG : 0);
  }
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  const timespec relative = to_timespec(timeout);
  deadline.tv_sec += relative.tv_sec;
  deadline.tv_nsec += relative.tv_nsec;
  constexpr long kNanosecondsPerSecond = 1'000'000'000;
  if (deadline.tv_nsec >= kNanosecondsPerSecond) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= kNanosecondsPerSecond;
  }
  syscall(SYS_futex_waitv, waiters, static_cast<unsigned>(watches.size()), 0u, &deadline,
          CLOCK_MONOTONIC);
}

}  // namespace fiber::posix
