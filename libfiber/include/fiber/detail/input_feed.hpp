// The input of a lazy imap / imap_unordered (multiprocessing's task feeder): a thread reads the
// caller's range item by item, a bounded way ahead of what the caller has taken (enough to keep
// every worker's pipeline full), and submits what it read in batches, each a Job. The caller
// takes results one by one, in item or in completion order; an exception the input throws is
// given at its position, after every earlier result. Not part of the public API.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "fiber/bytes.hpp"
#include "fiber/detail/job.hpp"
#include "fiber/export.hpp"

namespace fiber::detail {

class FIBER_EXPORT InputFeed {
 public:
  // Appends the next item's encoding to `out`; false at the end of the input (nothing appended).
  // What it throws is the input's exception.
  using Source = std::function<bool(Bytes& out)>;
  // Hands a batch to the pool (called on the feeder's thread).
  using Submit = std::function<void(const std::shared_ptr<Job>&)>;
  enum class Order { submission, completion };
  struct Shape {
    std::string task;
    std::size_t chunksize;  // 0: automatic; else, as Python, an input exception drops its chunk
    std::chrono::milliseconds timeout;
    std::size_t workers;  // of the pool: sets how far ahead the feeder reads
    Order order;
    std::string timed_as;  // the name its run times are learnt under (empty: task)
  };

  // Starts the feeder's thread.
  InputFeed(Source source, Submit submit, Shape shape);
  // Stops reading (the batches submitted run on) and joins the feeder's thread.
  ~InputFeed();
  InputFeed(const InputFeed&) = delete;
  InputFeed& operator=(const InputFeed&) = delete;

  // An item with an outcome: `index` in `job`.
  struct Item {
    std::shared_ptr<Job> job;
    std::size_t index;
  };
  // The next item in the feed's order; nothing once every item was taken. Throws
  // fiber::TimeoutError if none is there by `deadline` (call again to go on waiting), the
  // input's exception at its position, the reason given to stop() once the items submitted
  // before it were taken. One caller at a time.
  std::optional<Item> next(std::optional<Clock::time_point> deadline);

  // No more input is read or submitted (the pool was terminated or destroyed: `why`).
  void stop(const std::exception_ptr& why);
  // Whether every item read has an outcome and no more will be read.
  bool finished() const;
  // Waits until finished() (Pool::join), or until `deadline`: whether it is.
  bool wait_finished(std::optional<Clock::time_point> deadline);

  struct State;  // libfiber/src/caller/input_feed.cpp

 private:
  std::shared_ptr<State> state_;  // shared with the feeder's thread and the batches' hooks
  std::thread feeder_;
};

}  // namespace fiber::detail
