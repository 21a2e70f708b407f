// A pool's result-handler thread: runs the callbacks of apply_async / map_async / starmap_async
// one at a time, in the order their results completed, never on a caller's thread or the
// dispatcher's (as multiprocessing's result handler does). Started by the first call with a
// callback; its destructor runs what is queued, then joins the thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace fiber::detail {

class ResultHandler {
 public:
  ResultHandler();
  ~ResultHandler();
  ResultHandler(const ResultHandler&) = delete;
  ResultHandler& operator=(const ResultHandler&) = delete;

  // Queues `callback`; it must not throw (post() does not report for it).
  void post(std::function<void()> callback);

 private:
  void serve();

  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: it uses the members above
};

}  // namespace fiber::detail
