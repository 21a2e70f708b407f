// What travels between a worker and its task process, on the two rings of shared memory between
// them (task_ring.hpp). The one place that knows the format.
//
// Down (worker -> task process): chunk frames, each a u64 size and then a run entry
// (run_entry.hpp); a frame is laid out as an entry of a list (entry_list.hpp). Several may wait
// in the ring.
// Up (task process -> worker): for each chunk, in the order sent, one item record per item
// (item_record.hpp, as ItemRunner writes them and as a result entry carries them), then
// the chunk's run time (i64 nanoseconds): the worker cannot time a chunk that waited in the ring.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "fiber/serialization.hpp"
#include "shm/task_ring.hpp"
#include "wire/protocol_error.hpp"

namespace fiber::detail::task_frames {

// The stream ended in the middle of a frame.
class FrameError : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};

// What a chunk frame takes in the down ring beyond its body.
inline constexpr std::size_t kFrameOverhead = sizeof(std::uint64_t);

// --- down: chunk frames ---

// Writes one chunk's frame to `down`, waiting for room as needed; between waits of at most
// `wait`, `keep_waiting` may say that the reader is gone: then false.
bool write_chunk(task_ring::Ring& down, std::span<const char> body, std::chrono::nanoseconds wait,
                 const std::function<bool()>& keep_waiting);

// Reads chunk frames, waiting for them (the task process's end).
class ChunkReader {
 public:
  explicit ChunkReader(task_ring::Ring& down) : down_(down) {}
  // The next chunk's body, valid until the next call, waiting for it (looking again for `spin`
  // before sleeping). Nothing once the ring is closed between frames; throws FrameError if it was
  // closed inside one.
  std::optional<std::span<const char>> next(std::chrono::nanoseconds spin = task_ring::Ring::kSpin);

 private:
  task_ring::Ring& down_;
  Bytes input_;
  std::size_t consumed_ = 0;  // bytes of input_ already returned
};

// --- up: item records and run times ---

// Appends a chunk's run time, after its last record.
void append_run_time(Bytes& answer, std::chrono::nanoseconds ran);
// Writes answer bytes (records, run times) to `up`, waiting for room as long as it takes (a task
// process whose worker is gone is killed: PR_SET_PDEATHSIG).
void write_answer(task_ring::Ring& up, std::span<const char> answer);

// Splits what the task process answered into records and run times. Only the caller knows which
// comes next (a chunk's run time follows its last record), so it asks for one or the other.
class AnswerReader {
 public:
  // Takes all the ring holds now; how many bytes. Pieces returned before are no longer valid.
  std::size_t read_from(task_ring::Ring& up);
  // Takes bytes read from the ring before (while the worker waited to write a chunk).
  void add(std::span<const char> bytes);
  // The next item record, whole ([ItemStatus][bytes]), once all of it has arrived.
  std::optional<std::span<const char>> next_record();
  // The next chunk's run time, once it has arrived.
  std::optional<std::chrono::nanoseconds> next_run_time();
  // Forgets what has not been taken (the task process that wrote it is gone).
  void clear();
  // Bytes taken so far, over the reader's life.
  std::uint64_t received() const { return received_; }

 private:
  std::span<const char> unread() const;
  void drop_consumed();
  Bytes input_;
  std::size_t consumed_ = 0;
  std::uint64_t received_ = 0;
};

}  // namespace fiber::detail::task_frames
