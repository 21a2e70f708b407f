// Turns taken in the order they were asked for (a ticket lock). std::mutex promises no order: a
// thread that gives the pool back and asks again at once (a map_reduce_async's driver, waiting a
// slice at a time) can take it again before a thread that was already waiting wakes, for as long
// as it keeps asking; Pool.terminate() from another thread then waited minutes (a CI run timed
// out at 180 s in test_map_reduce_async_of_a_terminated_pool_fails). Here a thread waits for at
// most the turns asked for before its own.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace fiber::python {

class TurnQueue {
 public:
  // BasicLockable, for std::lock_guard: lock() waits for this thread's turn, unlock() ends it.
  void lock() {
    std::unique_lock guard(mutex_);
    const std::uint64_t ticket = next_ticket_++;
    called_.wait(guard, [&] { return serving_ == ticket; });
  }

  void unlock() {
    {
      std::lock_guard guard(mutex_);
      ++serving_;
    }
    called_.notify_all();  // the next ticket's holder is among the waiters, whichever it is
  }

 private:
  std::mutex mutex_;
  std::condition_variable called_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t serving_ = 0;
};

}  // namespace fiber::python
