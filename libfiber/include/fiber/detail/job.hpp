// One submitted call (a map, an imap, an apply_async) as the pool's templates see it: made from
// the encoded arguments, waited for, its results read. What the runtime does with it is in
// libfiber/src/caller/job_state.hpp. Not part of the public API.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fiber/export.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

using Clock = std::chrono::steady_clock;

class JobState;

class FIBER_EXPORT Job {
 public:
  // `arguments` holds every item's encoding back to back; item i is
  // arguments[offsets[i], offsets[i + 1]). `chunksize` 0 means automatic; `timeout` 0 means the
  // pool's; `timed_as` empty: its run times are learnt under the task's name
  // (fiber::TimingNamedTask).
  Job(std::string task, Bytes arguments, std::vector<std::uint64_t> offsets, std::size_t chunksize,
      std::chrono::milliseconds timeout = {}, std::string timed_as = {});
  // A job the runtime made itself (e.g. one of a broadcast's, sharing its arguments).
  explicit Job(std::unique_ptr<JobState> state);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  const std::string& task() const noexcept;
  std::size_t size() const noexcept;
  // Item `index`'s result decoded as T; rethrows its error; fiber::TypeMismatch if the task's
  // result is not a T.
  template <class T>
  T decoded_result(std::size_t index) const {
    return decode<T>(result(index), "the result of task '" + task() + "'");
  }
  bool done() const;
  // Waits until every item has an outcome; false if the deadline passed first.
  bool wait_all(std::optional<Clock::time_point> deadline);
  // Waits until item i has an outcome.
  bool wait_item(std::size_t index, std::optional<Clock::time_point> deadline);
  // Waits for the next item in completion order after `already_taken` were taken; returns its
  // index, or nothing if the deadline passed.
  std::optional<std::size_t> wait_next_completed(std::size_t already_taken,
                                                 std::optional<Clock::time_point> deadline);
  // Throws the item's error, or returns its result bytes. The item must have an outcome.
  std::span<const char> result(std::size_t index) const;
  bool succeeded(std::size_t index) const;

  // The runtime's side.
  JobState& state() const noexcept { return *state_; }

 private:
  std::unique_ptr<JobState> state_;
};

}  // namespace fiber::detail
