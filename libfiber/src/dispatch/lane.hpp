// The master's end of a lane (docs/design.md, "The lane"): a worker on the master's host lent it
// its task process's memory (task_memory.hpp), and the master writes that worker's chunks into
// the task process's down ring and reads their answers from the up ring itself. The worker stays
// off every task's path: it only watches the task process, and reports its death, which this
// end turns into the chunks' ends as the worker would have (task_chunks.hpp). Chunks sent while
// the lane is asked for and not yet lent wait here.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "fiber/serialization.hpp"
#include "shm/lane_doorbell.hpp"
#include "shm/task_memory.hpp"
#include "wire/task_frames.hpp"
#include "worker/task_chunks.hpp"

namespace fiber::detail {

class Lane {
 public:
  using Clock = std::chrono::steady_clock;
  // A chunk and item to kill the task process for (it ran past its timeout).
  struct Overdue {
    std::uint64_t chunk;
    std::uint32_t item;
  };

  Lane(std::uint64_t id, TaskChunks::Finished finished) : id_(id), chunks_(std::move(finished)) {}

  std::uint64_t id() const { return id_; }
  // Whether the worker lent the memory (else chunks wait).
  bool lent() const { return memory_.has_value(); }
  // Maps the memory that descriptor `memory_fd` of process `pid` holds and opens its doorbell,
  // descriptor `doorbell_fd` (throws fiber::Error if it cannot), and writes what waits.
  void attach(pid_t pid, int memory_fd, int doorbell_fd, Clock::time_point now);
  // The lent worker's doorbell (lane_doorbell.hpp), once attached.
  const std::shared_ptr<const LaneDoorbellRing>& doorbell() const { return doorbell_; }
  // Sends a chunk (its run body): into the ring, or kept until there is room (or a memory).
  void send(std::span<const char> body, Clock::time_point now);
  // The chunks kept because the lane was not lent yet, as a run message's list: the worker could
  // not lend it, so they go through the worker after all. The lane is not to be used after.
  Bytes take_unsent();
  // Writes what waits and takes what the task process answered; true if anything moved.
  bool progress(Clock::time_point now);
  // An item running past its timeout that this end has not asked to kill yet, if any.
  std::optional<Overdue> newly_overdue(Clock::time_point now);
  // The task process of a lent lane died (`reason`, from its worker): every record it wrote is
  // taken, then the chunk it ran ends crashed, or timed out if this end asked for the kill.
  void lost(const std::string& reason, Clock::time_point now);
  // The pool was terminated: every chunk ends cancelled.
  void cancel_all() { chunks_.cancel_all(); }
  // Whether the task process has nothing of this lane's to run or answer.
  bool idle() const { return chunks_.empty(); }

  // Whether the master may sleep until the task process answers: lent, every frame written and
  // no answer waiting. Raises the answer ring's flag, so that the answer wakes a sleeper on
  // answer_word(); awake() lowers it.
  bool may_sleep();
  void awake();
  const std::atomic<std::uint32_t>& answer_word() const { return memory_->up().reader_word(); }

 private:
  // A frame not wholly written, and where it ends in unsent_.
  struct Unsent {
    std::uint64_t chunk_id;
    std::size_t end;
  };
  void write_unsent();

  std::uint64_t id_;
  TaskChunks chunks_;
  task_frames::AnswerReader answers_;
  std::optional<TaskMemory> memory_;
  std::shared_ptr<const LaneDoorbellRing> doorbell_;
  Bytes unsent_;             // chunk frames not yet in the ring
  std::size_t written_ = 0;  // bytes of unsent_ in the ring
  std::deque<Unsent> frames_;
  // The last kill asked for, the chunk then in front and the item blamed: the death that follows
  // is that timeout's, if that chunk is still in front.
  std::optional<Overdue> kill_asked_;
  std::uint64_t kill_asked_front_ = 0;
  std::uint32_t kill_blamed_ = 0;
};

}  // namespace fiber::detail
