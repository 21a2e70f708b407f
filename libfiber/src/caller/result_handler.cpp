#include "caller/result_handler.hpp"

#include <utility>

namespace fiber::detail {

ResultHandler::ResultHandler() : thread_([this] { serve(); }) {}

ResultHandler::~ResultHandler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

void ResultHandler::post(std::function<void()> callback) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(callback));
  }
  queued_.notify_one();
}

void ResultHandler::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    auto callback = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    callback();
    lock.lock();
  }
}

}  // namespace fiber::detail
