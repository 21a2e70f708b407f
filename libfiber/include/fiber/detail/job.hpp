// One submitted call (a map, an imap, an apply_async): its encoded arguments, and the results as
// they arrive. Shared between the caller's thread, which waits and decodes, and the runtime's
// dispatcher, which cuts chunks and stores results. Not part of the public API.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fiber/export.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

using Clock = std::chrono::steady_clock;

// Makes progress on jobs from the thread that waits for them (the runtime's dispatcher does), so
// that a waiting caller needs no other thread to hand it its results.
class ProgressDriver {
 public:
  // Makes progress on this thread until ready() or the deadline; false if this thread cannot
  // (then the waiter is woken by whoever makes progress).
  virtual bool drive(const std::function<bool()>& ready,
                     std::optional<Clock::time_point> deadline) = 0;

 protected:
  ~ProgressDriver() = default;
};

class FIBER_EXPORT Job {
 public:
  // `arguments` holds every item's encoding back to back; item i is
  // arguments[offsets[i], offsets[i + 1]). `chunksize` 0 means automatic; `timeout` 0 means the
  // pool's.
  Job(std::string task, Bytes arguments, std::vector<std::uint64_t> offsets, std::size_t chunksize,
      std::chrono::milliseconds timeout = {});

  const std::string& task() const noexcept { return task_; }
  // Item `index`'s result decoded as T; rethrows its error; fiber::TypeMismatch if the task's
  // result is not a T.
  template <class T>
  T decoded_result(std::size_t index) const {
    return decode<T>(result(index), "the result of task '" + task_ + "'");
  }
  std::size_t size() const noexcept { return offsets_.size() - 1; }
  std::size_t chunksize() const noexcept { return chunksize_; }
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  std::span<const char> arguments(std::size_t first, std::size_t count) const;
  std::span<const std::uint64_t> offsets(std::size_t first, std::size_t count) const;

  // --- dispatcher side (under the dispatcher's progress lock only) ---
  std::size_t next_unsent = 0;  // items before it have been cut into chunks
  // Items to send again (first, count): after a crash, a timeout or a lost worker.
  std::deque<std::pair<std::size_t, std::size_t>> requeued;
  std::unordered_map<std::size_t, int> failed_attempts;  // item -> crashes and timeouts so far
  bool has_unsent() const { return next_unsent < size() || !requeued.empty(); }

  // Stores the results of items [first, first + results.size()); `payload` owns the bytes the
  // spans point into. Items that already have an outcome keep it (exactly once).
  struct ItemResult {
    bool ok;
    std::uint64_t offset;  // into payload
    std::uint64_t size;
    std::exception_ptr error;  // when !ok
  };
  void store(std::size_t first, std::span<ItemResult> results,
             const std::shared_ptr<const Bytes>& payload);
  // Fails every item that has no outcome yet (pool terminated, runtime stopped).
  void fail_pending(const std::exception_ptr& error);

  // --- caller side ---
  // Who makes progress on this job while a caller waits for it; set before the job is shared.
  void drive_with(ProgressDriver* driver) noexcept { driver_ = driver; }
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

 private:
  struct Outcome {
    const Bytes* payload = nullptr;  // kept alive by payloads_
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::exception_ptr error;
    bool set = false;
  };
  bool wait_until(std::unique_lock<std::mutex>& lock, std::optional<Clock::time_point> deadline,
                  const auto& ready);

  const std::string task_;
  const Bytes arguments_;
  const std::vector<std::uint64_t> offsets_;
  const std::size_t chunksize_;
  const std::chrono::milliseconds timeout_;
  ProgressDriver* driver_ = nullptr;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Outcome> outcomes_;
  std::vector<std::size_t> completion_order_;
  std::vector<std::shared_ptr<const Bytes>> payloads_;
  std::size_t completed_ = 0;
  // What a lone waiter waits for, so the dispatcher wakes it only then (a map of 100,000 items
  // must not wake its caller 100,000 times). With several waiters every change wakes them all.
  int waiters_ = 0;
  std::size_t wake_at_completed_ = 0;
  std::optional<std::size_t> wake_at_item_;
};

}  // namespace fiber::detail
