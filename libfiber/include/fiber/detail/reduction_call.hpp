// What a fiber::Reduction waits for: one Pool::map_reduce call. Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fiber/bytes.hpp"
#include "fiber/detail/job.hpp"
#include "fiber/export.hpp"

namespace fiber {

class Pool;

namespace detail {

// One map_reduce call, driven by whoever waits for it: it submits each node's chunks, then each
// node's combination once its chunks are done, and folds the nodes' values
// (libfiber/src/reduction/reduction_call.cpp).
class FIBER_EXPORT ReductionCall {
 public:
  // `timed_as`: the name the chunks' run times are learnt under (empty: the task's).
  ReductionCall(Pool& pool, std::string task, std::string operation, Bytes items,
                std::vector<std::uint64_t> offsets, std::size_t chunksize,
                std::string timed_as = {});
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
}  // namespace fiber
