// One object per process, made on first use and made again in a forked child: the parent's is
// left as it is there (its threads are not in the child, and its locks may have been held when
// the process forked). Task processes are forked from workers that may have used queues.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>

#include "posix/this_pid.hpp"

namespace fiber::posix {

template <class T>
class PerProcess {
 public:
  // This process's object, made by `make()` (a new T*) if it has none.
  template <class Make>
  T& get(Make make) {
    if (T* object = mine()) return *object;
    std::lock_guard lock(creation_);
    if (T* object = mine()) return *object;
    T* object = make();
    object_.store(object, std::memory_order_release);
    pid_.store(this_pid(), std::memory_order_release);
    return *object;
  }
  // This process's object, or null.
  T* mine() const {
    if (pid_.load(std::memory_order_acquire) != this_pid()) return nullptr;
    return object_.load(std::memory_order_acquire);
  }
  // Forgets this process's object (the caller deletes it).
  void forget() {
    std::lock_guard lock(creation_);
    pid_.store(0, std::memory_order_release);
    object_.store(nullptr, std::memory_order_release);
  }

 private:
  std::atomic<T*> object_{nullptr};
  std::atomic<pid_t> pid_{0};
  std::mutex creation_;
};

}  // namespace fiber::posix
