/// \file
/// The result of Pool::apply_async / map_async / starmap_async: multiprocessing's AsyncResult.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "fiber/detail/job.hpp"
#include "fiber/errors.hpp"

namespace fiber {

/// What Pool::apply_async, map_async and starmap_async call in the master when the result is
/// there, as Python's callback and error_callback: `callback` with the result, or
/// `error_callback` with the error that get() throws. Both run on the pool's result-handler
/// thread, one at a time, in the order results complete, before get() or wait() returns for that
/// result. A callback that throws is reported in one line and ignored. Either may be empty. Keep
/// callbacks short (they hold up the ones after them) and off their pool (a Pool is used from the
/// thread that owns it).
///
///   pool.map_async(square, items, {.callback = [&](const std::vector<int>& squares) { ... },
///                                  .error_callback = [&](std::exception_ptr error) { ... }});
template <class T>
struct AsyncCallbacks {
  /// Called with the result once it is there.
  std::function<void(const T&)> callback{};
  /// Called instead of `callback` with the error that get() throws.
  std::function<void(std::exception_ptr)> error_callback{};
};

/// AsyncCallbacks of a task that returns nothing: `callback` takes no argument.
template <>
struct AsyncCallbacks<void> {
  /// Called once the result is there.
  std::function<void()> callback{};
  /// Called instead of `callback` with the error that get() throws.
  std::function<void(std::exception_ptr)> error_callback{};
};

/// A result that may not be there yet (Python's AsyncResult): what Pool::apply_async, map_async
/// and starmap_async return. Copies share the same result.
template <class T>
class AsyncResult {
 public:
  /// How the job's bytes become a T (the pool chooses it).
  using Decoder = T (*)(const detail::Job&);

  /// Made by Pool; not for user code.
  AsyncResult(std::shared_ptr<detail::Job> job, Decoder decoder)
      : job_(std::move(job)), decoder_(decoder) {}

  /// Waits for the result; rethrows the task's error (fiber::TaskError, ...).
  T get() const {
    job_->wait_all(std::nullopt);
    return decoder_(*job_);
  }

  /// As get(), but throws fiber::TimeoutError if the result is not there within `timeout`.
  template <class Rep, class Period>
  T get(std::chrono::duration<Rep, Period> timeout) const {
    if (!wait(timeout)) throw TimeoutError("fiber: result not ready within the timeout");
    return decoder_(*job_);
  }

  /// Waits until the result is there (without throwing the task's error).
  void wait() const { job_->wait_all(std::nullopt); }

  /// True if the result is ready within `timeout`.
  template <class Rep, class Period>
  bool wait(std::chrono::duration<Rep, Period> timeout) const {
    return job_->wait_all(detail::Clock::now() +
                          std::chrono::duration_cast<detail::Clock::duration>(timeout));
  }

  /// True if the result is there now.
  bool ready() const { return job_->done(); }

  /// True if every item succeeded. Like Python, asking before the result is ready is an error.
  bool successful() const {
    if (!ready()) throw std::logic_error("fiber: AsyncResult::successful() before ready()");
    for (std::size_t i = 0; i < job_->size(); ++i) {
      if (!job_->succeeded(i)) return false;
    }
    return true;
  }

 private:
  std::shared_ptr<detail::Job> job_;
  Decoder decoder_;
};

}  // namespace fiber
