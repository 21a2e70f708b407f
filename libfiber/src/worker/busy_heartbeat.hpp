// Heartbeats for a worker busy running items in its own process (Isolation::none), where its
// main loop cannot send them: a thread that sends one every interval (the running chunk's) while
// the main thread runs items. The main thread makes no MPI call meanwhile, and the switch between
// the two is under a mutex, so MPI is never called from two threads at once
// (MPI_THREAD_SERIALIZED).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace fiber::detail {

class BusyHeartbeat {
 public:
  // `beat` sends one heartbeat (called on the thread, while the main thread runs items).
  explicit BusyHeartbeat(std::function<void()> beat);
  ~BusyHeartbeat();
  BusyHeartbeat(const BusyHeartbeat&) = delete;
  BusyHeartbeat& operator=(const BusyHeartbeat&) = delete;

  // While a Running lives, the main thread runs items and makes no MPI call.
  class Running {
   public:
    Running(BusyHeartbeat& heartbeat, std::chrono::steady_clock::duration interval);
    ~Running();
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;

   private:
    BusyHeartbeat& heartbeat_;
  };

 private:
  void beat_while_running();

  std::function<void()> beat_;
  std::chrono::steady_clock::duration interval_{};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool running_ = false;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point running_since_;
  std::thread thread_;
};

}  // namespace fiber::detail
