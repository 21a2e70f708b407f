#include "worker/busy_heartbeat.hpp"

#include <utility>

namespace fiber::detail {

BusyHeartbeat::BusyHeartbeat(std::function<void()> beat)
    : beat_(std::move(beat)), thread_([this] { beat_while_running(); }) {}

BusyHeartbeat::~BusyHeartbeat() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

BusyHeartbeat::Running::Running(BusyHeartbeat& heartbeat,
                                std::chrono::steady_clock::duration interval)
    : heartbeat_(heartbeat) {
  {
    std::lock_guard lock(heartbeat_.mutex_);
    heartbeat_.running_ = true;
    heartbeat_.interval_ = interval;
    heartbeat_.running_since_ = std::chrono::steady_clock::now();
  }
  heartbeat_.changed_.notify_all();
}

BusyHeartbeat::Running::~Running() {
  // Waits for a heartbeat being sent: afterwards the main thread may call MPI again.
  std::lock_guard lock(heartbeat_.mutex_);
  heartbeat_.running_ = false;
}

void BusyHeartbeat::beat_while_running() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!running_) {
      changed_.wait(lock, [this] { return running_ || stopping_; });
      continue;
    }
    // The main loop said it lives just before it started the items: the first beat is due one
    // interval later.
    auto since = running_since_;
    if (changed_.wait_until(lock, since + interval_,
                            [&] { return stopping_ || !running_ || running_since_ != since; })) {
      continue;
    }
    beat_();
    running_since_ = std::chrono::steady_clock::now();
  }
}

}  // namespace fiber::detail
