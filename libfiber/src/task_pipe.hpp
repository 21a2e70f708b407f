// The two pipes between a worker and its task process, and what travels on them. The one place
// that knows the format.
//
// Down (worker -> task process): chunk frames, each a u64 size and then a run body
// (protocol.hpp, RunHeader). Several may wait in the pipe.
// Up (task process -> worker): for each chunk, in the order sent, one item record per item
// ([ItemStatus][bytes], as ItemRunner writes them and as a result message carries them), then
// the chunk's run time (i64 nanoseconds): the worker cannot time a chunk that waited in the pipe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fiber/serialization.hpp"
#include "protocol.hpp"

namespace fiber::detail::task_pipe {

// A pipe ended in the middle of a frame, or could not be read.
class PipeError : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};

// What a chunk frame takes in the down pipe beyond its body.
inline constexpr std::size_t kFrameOverhead = sizeof(std::uint64_t);

// --- down: chunk frames ---

// Writes one chunk's frame to `fd`; false if the reader is gone (the caller ignores SIGPIPE).
bool write_chunk(int fd, std::span<const char> body);

// Reads chunk frames from a blocking descriptor (the task process's end).
class ChunkReader {
 public:
  explicit ChunkReader(int fd) : fd_(fd) {}
  // The next chunk's body, valid until the next call. Nothing at end of file between frames;
  // throws PipeError at end of file inside one, or if the pipe cannot be read.
  std::optional<std::span<const char>> next();

 private:
  int fd_;
  Bytes input_;
  std::size_t consumed_ = 0;  // bytes of input_ already returned
};

// --- up: item records and run times ---

// Appends a chunk's run time, after its last record.
void append_run_time(Bytes& answer, std::chrono::nanoseconds ran);
// Writes answer bytes (records, run times) to `fd`; false if the reader is gone.
bool write_answer(int fd, std::span<const char> answer);

// Splits what the task process answered, read from a non-blocking descriptor (the worker's end),
// into records and run times. Only the caller knows which comes next (a chunk's run time follows
// its last record), so it asks for one or the other.
class AnswerReader {
 public:
  // Reads all the pipe holds now; false at end of file (the task process is gone). Pieces
  // returned before are no longer valid.
  bool read_from(int fd);
  // The next item record, whole ([ItemStatus][bytes]), once all of it has arrived.
  std::optional<std::span<const char>> next_record();
  // The next chunk's run time, once it has arrived.
  std::optional<std::chrono::nanoseconds> next_run_time();
  // Forgets what has not been taken (the task process that wrote it is gone).
  void clear();
  // Bytes read so far, over the reader's life.
  std::uint64_t received() const { return received_; }

 private:
  std::span<const char> unread() const;
  Bytes input_;
  std::size_t consumed_ = 0;
  std::uint64_t received_ = 0;
};

}  // namespace fiber::detail::task_pipe
