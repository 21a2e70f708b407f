/// \file
/// The result of Pool::map_reduce_async: a value folded from every item's result.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

#include "fiber/detail/job.hpp"
#include "fiber/detail/reduction_call.hpp"
#include "fiber/errors.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

/// A value folded from a map's results that may not be there yet: what Pool::map_reduce_async
/// returns.
template <class R>
class Reduction {
 public:
  /// Made by Pool; not for user code.
  explicit Reduction(std::shared_ptr<detail::ReductionCall> call) : call_(std::move(call)) {}

  /// Waits for the value; rethrows the first error (fiber::TaskError of the task or the
  /// operation, fiber::WorkerLost, ...).
  R get() const {
    call_->wait(std::nullopt);
    return decode<R>(call_->value(), "the value of a reduction");
  }

  /// As get(), but throws fiber::TimeoutError if the value is not there within `timeout`.
  template <class Rep, class Period>
  R get(std::chrono::duration<Rep, Period> timeout) const {
    if (!wait(timeout)) throw TimeoutError("fiber: reduction not done within the timeout");
    return decode<R>(call_->value(), "the value of a reduction");
  }

  /// True if the value is there within `timeout`.
  template <class Rep, class Period>
  bool wait(std::chrono::duration<Rep, Period> timeout) const {
    return call_->wait(detail::Clock::now() +
                       std::chrono::duration_cast<detail::Clock::duration>(timeout));
  }

  /// True if the value is there now.
  bool ready() const { return call_->wait(detail::Clock::now()); }

 private:
  std::shared_ptr<detail::ReductionCall> call_;
};

}  // namespace fiber
