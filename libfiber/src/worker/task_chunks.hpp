// The chunks sent to a task process, in its order, and what its answers make of them: for each
// chunk one result entry (wire/result_entry.hpp), as a result message carries it. A chunk ends
// exactly once: complete, crashed (the item the progress page names), timed out, not run (behind a
// crash) or cancelled. The worker keeps one for the task process it writes to; the master keeps one
// for each lane (dispatch/lane.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "fiber/serialization.hpp"
#include "shm/task_memory.hpp"
#include "wire/result_entry.hpp"
#include "wire/run_entry.hpp"
#include "wire/task_frames.hpp"

namespace fiber::detail {

class TaskChunks {
 public:
  using Clock = std::chrono::steady_clock;
  // Takes each chunk's result entry as it ends (never for a silent one).
  using Finished = std::function<void(std::shared_ptr<Bytes> result)>;

  explicit TaskChunks(Finished finished) : finished_(std::move(finished)) {}

  // A chunk was sent. A silent one (an initializer or broadcast replayed in a new task process)
  // is waited for by nobody: it ends without a result.
  void add(const RunHeader& header, bool silent, Clock::time_point now);
  bool empty() const { return chunks_.empty(); }
  std::size_t size() const { return chunks_.size(); }
  const RunHeader& front() const { return chunks_.front().header; }
  // When the front chunk was sent, and when the last record came.
  Clock::time_point front_sent() const { return chunks_.front().sent; }
  Clock::time_point last_record() const { return last_record_; }

  // Takes the records and run times in `answers` and ends the chunks they complete.
  void take(task_frames::AnswerReader& answers, Clock::time_point now);
  // The item of the front chunk that ran past its timeout, if one did, by the task process's
  // progress page.
  std::optional<std::uint32_t> overdue(const TaskProgress& page, Clock::time_point now) const;
  // The time after which overdue() may say so as the page reads now (none: no timeout to watch,
  // or the task process has moved past the front chunk); an item that starts later moves it on.
  std::optional<Clock::time_point> deadline(const TaskProgress& page) const;
  // The task process died, and every record it wrote was taken: the chunk it ran crashed (on the
  // item its progress page names), the ones behind it did not run.
  void died(const std::string& reason, const TaskProgress& page, Clock::time_point now);
  // Item `item` of the front chunk ran past its timeout, and the task process was killed.
  void timed_out(std::uint32_t item, Clock::time_point now);
  // The pool was terminated: every chunk ends cancelled.
  void cancel_all();

 private:
  struct Sent {
    RunHeader header;
    bool silent;
    Bytes result;  // begun (begin_result_entry), then the item records
    std::uint32_t done = 0;
    Clock::time_point sent;
  };
  // deadline(page) with the page's chunk as read once by the caller.
  std::optional<Clock::time_point> deadline(const TaskProgress& page,
                                            std::uint64_t current_chunk) const;
  // Ends the front chunk. For a crash or a timeout, `failed_item` is the item it died running;
  // `ran` is how long it ran (the master sizes chunks by it).
  void finish_front(ChunkStatus status, const std::string& reason, std::uint32_t failed_item,
                    Clock::duration ran);
  // The chunks behind a death did not run.
  void abandon_rest();
  // Every chunk ends with `status` and no item.
  void end_all(ChunkStatus status);

  Finished finished_;
  std::deque<Sent> chunks_;
  Clock::time_point last_record_ = Clock::now();
};

}  // namespace fiber::detail
