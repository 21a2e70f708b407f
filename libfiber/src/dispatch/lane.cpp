#include "dispatch/lane.hpp"

#include <algorithm>

#include "trace/hop_trace.hpp"
#include "wire/entry_list.hpp"
#include "wire/run_entry.hpp"

namespace fiber::detail {

void Lane::attach(pid_t pid, int memory_fd, int doorbell_fd, Clock::time_point now) {
  auto memory = TaskMemory::open(pid, memory_fd);
  doorbell_ = std::make_shared<const LaneDoorbellRing>(LaneDoorbellRing::open(pid, doorbell_fd));
  memory_.emplace(std::move(memory));
  progress(now);
}

void Lane::send(std::span<const char> body, Clock::time_point now) {
  RunHeader header = RunBody(body).header();
  hop_trace::mark(hop_trace::Point::worker_received, header.chunk_id);
  chunks_.add(header, /*silent=*/false, now);
  append_entry(unsent_, body);  // a chunk frame (task_frames.hpp) is laid out as a list's entry
  frames_.push_back({header.chunk_id, unsent_.size()});
  if (memory_) write_unsent();
}

void Lane::write_unsent() {
  // As much as the ring has room for now (only this end writes: the room can only grow), each
  // frame it completes marked first: the task process may start the chunk before the write
  // returns.
  std::size_t count = std::min(unsent_.size() - written_, memory_->down().space());
  while (!frames_.empty() && frames_.front().end <= written_ + count) {
    hop_trace::mark(hop_trace::Point::worker_forwarded, frames_.front().chunk_id);
    frames_.pop_front();
  }
  if (count > 0) {
    written_ += memory_->down().write_some(std::span<const char>(unsent_).subspan(written_, count));
  }
  if (written_ == unsent_.size()) {
    unsent_.clear();
    written_ = 0;
  }
}

Bytes Lane::take_unsent() { return std::exchange(unsent_, {}); }

bool Lane::progress(Clock::time_point now) {
  if (!memory_) return false;
  bool moved = false;
  if (!unsent_.empty()) {
    std::size_t before = written_ + unsent_.size();
    write_unsent();
    moved = written_ + unsent_.size() != before;
  }
  if (answers_.read_from(memory_->up()) > 0) {
    chunks_.take(answers_, now);
    moved = true;
  }
  return moved;
}

bool Lane::may_sleep() { return memory_ && unsent_.empty() && memory_->up().reader_may_sleep(); }

void Lane::awake() {
  if (memory_) memory_->up().reader_awake();
}

std::optional<Lane::Overdue> Lane::newly_overdue(Clock::time_point now) {
  if (!memory_ || chunks_.empty()) return std::nullopt;
  const TaskProgress& page = memory_->progress();
  auto blamed = chunks_.overdue(page, now);
  if (!blamed) return std::nullopt;
  std::uint64_t chunk = page.chunk.load(std::memory_order_acquire);
  std::uint32_t item = page.item.load(std::memory_order_acquire);
  if (kill_asked_ && kill_asked_->chunk == chunk && kill_asked_->item == item) return std::nullopt;
  kill_asked_ = Overdue{chunk, item};
  kill_asked_front_ = chunks_.front().chunk_id;
  kill_blamed_ = *blamed;
  return kill_asked_;
}

void Lane::lost(const std::string& reason, Clock::time_point now) {
  answers_.read_from(memory_->up());  // what it wrote before it died
  chunks_.take(answers_, now);
  if (chunks_.empty()) return;
  if (kill_asked_ && chunks_.front().chunk_id == kill_asked_front_) {
    chunks_.timed_out(kill_blamed_, now);
    return;
  }
  chunks_.died(reason, memory_->progress(), now);
}

}  // namespace fiber::detail
