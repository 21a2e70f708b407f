// The result of Pool::map_reduce_async: a value folded from every item's result.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fiber/detail/job.hpp"
#include "fiber/errors.hpp"
#include "fiber/export.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

class Pool;

namespace detail {

// One map_reduce call, driven by whoever waits for it: it submits each node's chunks, then each
// node's combination once its chunks are done, and folds the nodes' values
// (libfiber/src/reduction/reduction_call.cpp).
class FIBER_EXPORT ReductionCall {
 public:
  ReductionCall(Pool& pool, std::string task, std::string operation, Bytes items,
                std::vector<std::uint64_t> offsets, std::size_t chunksize);
  ~ReductionCall();
  ReductionCall(const ReductionCall&) = delete;
  ReductionCall& operator=(const ReductionCall&) = delete;

  // Advances the call until its value is there (true) or the deadline passed (false).
  bool wait(std::optional<Clock::time_point> deadline);
  // The value's bytes; throws the call's error. Only once wait() returned true.
  std::span<const char> value() const;
  // The pool is being destroyed: a call not done fails with fiber::PoolClosed.
  void orphan();

 private:
  struct Progress;
  std::unique_ptr<Progress> progress_;
};

}  // namespace detail

template <class R>
class Reduction {
 public:
  explicit Reduction(std::shared_ptr<detail::ReductionCall> call) : call_(std::move(call)) {}

  // Waits for the value; rethrows the first error (fiber::TaskError of the task or the
  // operation, fiber::WorkerLost, ...).
  R get() const {
    call_->wait(std::nullopt);
    return decode<R>(call_->value(), "the value of a reduction");
  }

  // As get(), but throws fiber::TimeoutError if the value is not there within `timeout`.
  template <class Rep, class Period>
  R get(std::chrono::duration<Rep, Period> timeout) const {
    if (!wait(timeout)) throw TimeoutError("fiber: reduction not done within the timeout");
    return decode<R>(call_->value(), "the value of a reduction");
  }

  // True if the value is there within `timeout`.
  template <class Rep, class Period>
  bool wait(std::chrono::duration<Rep, Period> timeout) const {
    return call_->wait(detail::Clock::now() +
                       std::chrono::duration_cast<detail::Clock::duration>(timeout));
  }

  bool ready() const { return call_->wait(detail::Clock::now()); }

 private:
  std::shared_ptr<detail::ReductionCall> call_;
};

}  // namespace fiber
