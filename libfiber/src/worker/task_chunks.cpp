#include "worker/task_chunks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trace/hop_trace.hpp"

namespace fiber::detail {

void TaskChunks::add(const RunHeader& header, bool silent, Clock::time_point now) {
  chunks_.push_back(Sent{header, silent, begin_result_entry(), 0, now});
}

void TaskChunks::take(task_frames::AnswerReader& answers, Clock::time_point now) {
  while (!chunks_.empty()) {
    Sent& chunk = chunks_.front();
    if (chunk.done == chunk.header.count) {  // its run time follows its last record
      auto ran = answers.next_run_time();
      if (!ran) return;
      finish_front(ChunkStatus::complete, {}, 0, *ran);
      continue;
    }
    auto record = answers.next_record();
    if (!record) return;
    chunk.result.insert(chunk.result.end(), record->begin(), record->end());
    last_record_ = now;
    ++chunk.done;
  }
}

std::optional<TaskChunks::Clock::time_point> TaskChunks::deadline(const TaskProgress& page) const {
  return deadline(page, page.chunk.load(std::memory_order_acquire));
}

std::optional<TaskChunks::Clock::time_point> TaskChunks::deadline(
    const TaskProgress& page, std::uint64_t current_chunk) const {
  if (chunks_.empty()) return std::nullopt;
  const Sent& front = chunks_.front();
  if (front.header.timeout_ms == 0 || current_chunk > front.header.chunk_id) {
    return std::nullopt;  // moved past it: its records are still on the way
  }
  // It runs the front chunk, or is about to (its clock starts when the chunk before it ended).
  const auto started = current_chunk == front.header.chunk_id ? page.item_started()
                                                              : std::max(front.sent, last_record_);
  return started + std::chrono::milliseconds(front.header.timeout_ms);
}

std::optional<std::uint32_t> TaskChunks::overdue(const TaskProgress& page,
                                                 Clock::time_point now) const {
  const std::uint64_t current_chunk = page.chunk.load(std::memory_order_acquire);
  const auto due = deadline(page, current_chunk);
  if (!due || now <= *due) return std::nullopt;
  return current_chunk == chunks_.front().header.chunk_id ? page.item.load() : chunks_.front().done;
}

void TaskChunks::died(const std::string& reason, const TaskProgress& page, Clock::time_point now) {
  // A chunk whose records all came but not its run time (it died writing them) is complete.
  if (!chunks_.empty() && chunks_.front().done == chunks_.front().header.count) {
    finish_front(ChunkStatus::complete, {}, 0, now - chunks_.front().sent);
  }
  // It died in the front chunk, or (if it had not started that one yet) between chunks: the
  // front chunk's next item is blamed then.
  if (chunks_.empty()) return;
  const Sent& front = chunks_.front();
  std::uint32_t item = page.chunk.load() == front.header.chunk_id ? page.item.load() : front.done;
  finish_front(ChunkStatus::crashed, reason, item, now - front.sent);
  abandon_rest();
}

void TaskChunks::timed_out(std::uint32_t item, Clock::time_point now) {
  const Sent& front = chunks_.front();
  finish_front(ChunkStatus::timed_out,
               fmt::format("the task ran longer than its timeout of {:g} s and was killed",
                           front.header.timeout_ms / 1000.0),
               item, now - front.sent);
  abandon_rest();
}

void TaskChunks::cancel_all() { end_all(ChunkStatus::cancelled); }

void TaskChunks::abandon_rest() { end_all(ChunkStatus::not_run); }

void TaskChunks::end_all(ChunkStatus status) {
  for (const auto& chunk : chunks_) {
    if (!chunk.silent) {
      finished_(std::make_shared<Bytes>(itemless_result(chunk.header.chunk_id, status)));
    }
  }
  chunks_.clear();
}

void TaskChunks::finish_front(ChunkStatus status, const std::string& reason,
                              std::uint32_t failed_item, Clock::duration ran) {
  Sent& chunk = chunks_.front();
  if (!chunk.silent) {
    auto result = std::make_shared<Bytes>(std::move(chunk.result));
    std::uint32_t failed =
        has_reason(status) ? std::clamp(failed_item, chunk.done, chunk.header.count - 1) : 0;
    hop_trace::mark(hop_trace::Point::worker_answered, chunk.header.chunk_id);
    finish_result_entry(
        *result, result_header(chunk.header.chunk_id, chunk.done, status, ran, failed), reason);
    finished_(std::move(result));
  }
  chunks_.pop_front();
}

}  // namespace fiber::detail
