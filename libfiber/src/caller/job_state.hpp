// The runtime's side of a submitted call (fiber::detail::Job): the encoded arguments, and the
// results as they arrive. Shared between the caller's thread, which waits and decodes, and the
// runtime's dispatcher, which cuts chunks and stores results.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "caller/progress_driver.hpp"
#include "fiber/detail/job.hpp"

namespace fiber::detail {

class JobState {
 public:
  // `arguments` holds every item's encoding back to back; item i is
  // arguments[offsets[i], offsets[i + 1]). `chunksize` 0 means automatic; `timeout` 0 means the
  // pool's.
  JobState(std::string task, Bytes arguments, std::vector<std::uint64_t> offsets,
           std::size_t chunksize, std::chrono::milliseconds timeout = {});
  // The same, with arguments shared with other jobs (a broadcast's, one job per worker).
  JobState(std::string task, std::shared_ptr<const Bytes> arguments,
           std::vector<std::uint64_t> offsets, std::size_t chunksize,
           std::chrono::milliseconds timeout = {});

  const std::string& task() const noexcept { return task_; }
  std::size_t size() const noexcept { return offsets_.size() - 1; }
  std::size_t chunksize() const noexcept { return chunksize_; }
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  std::span<const char> arguments(std::size_t first, std::size_t count) const;
  std::span<const std::uint64_t> offsets(std::size_t first, std::size_t count) const;

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

  // Who makes progress on this job while a caller waits for it; set before the job is shared.
  void drive_with(ProgressDriver* driver) noexcept { driver_ = driver; }
  // The host whose workers run this job while the pool has any there (a reduction's part that
  // is combined on that node); empty: any worker. Set before the job is shared.
  void run_on_host(std::string host) { host_ = std::move(host); }
  const std::string& host() const noexcept { return host_; }
  // The name its chunks' run times are learnt under (chunk_policy's TaskTimings): its task's,
  // unless set (empty: not set). A reduction's chunks all run reduce_chunk over a user's task,
  // and are timed as that task: timed together, a quick reduction's chunks let the next
  // reduction's slow ones be queued two to a worker while other workers idled. Set before the
  // job is shared.
  void time_as(std::string name) { timed_as_ = std::move(name); }
  const std::string& timed_as() const noexcept { return timed_as_.empty() ? task_ : timed_as_; }

  // A callback (Pool's apply_async and map_async): `hook` is called once, outside the lock, when
  // the last item gets its outcome, and the job counts as done (done(), wait_all()) only after
  // callback_finished(). Set before the job is shared.
  void call_when_done(std::function<void()> hook);
  void callback_finished();
  // Called outside the lock, with how many items just got their outcome (a lazy imap's feed
  // listens for them). Set before the job is shared.
  void on_outcomes(std::function<void(std::size_t count)> hook) { on_outcomes_ = std::move(hook); }
  ProgressDriver* driver() const noexcept { return driver_; }

 private:
  friend class Job;  // the caller's side: waiting and reading results

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
  const std::shared_ptr<const Bytes> arguments_;
  const std::vector<std::uint64_t> offsets_;
  const std::size_t chunksize_;
  const std::chrono::milliseconds timeout_;
  ProgressDriver* driver_ = nullptr;
  std::string host_;
  std::string timed_as_;  // empty: task_

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Outcome> outcomes_;
  std::vector<std::size_t> completion_order_;
  std::vector<std::shared_ptr<const Bytes>> payloads_;
  std::size_t completed_ = 0;
  std::function<void()> when_done_;
  std::function<void(std::size_t)> on_outcomes_;
  bool callback_pending_ = false;
  // What a lone waiter waits for, so the dispatcher wakes it only then (a map of 100,000 items
  // must not wake its caller 100,000 times). With several waiters every change wakes them all.
  int waiters_ = 0;
  std::size_t wake_at_completed_ = 0;
  std::optional<std::size_t> wake_at_item_;
};

}  // namespace fiber::detail
