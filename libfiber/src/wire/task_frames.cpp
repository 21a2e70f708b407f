#include "wire/task_frames.hpp"

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "wire/codec.hpp"
#include "wire/item_record.hpp"

namespace fiber::detail::task_frames {
namespace {

using namespace std::chrono_literals;

// A frame up to this size goes in one write (size and body together): the reader wakes once.
constexpr std::size_t kOneWriteBytes = 4096;
// How long a side sleeps between looks at a ring whose peer is slow; the peer's write wakes it
// sooner.
constexpr auto kIdleWait = 1s;

}  // namespace

bool write_chunk(task_ring::Ring& down, std::span<const char> body, std::chrono::nanoseconds wait,
                 const std::function<bool()>& keep_waiting) {
  std::uint64_t size = body.size();
  if (kFrameOverhead + size <= kOneWriteBytes) {
    char frame[kOneWriteBytes];
    std::memcpy(frame, &size, sizeof size);
    std::memcpy(frame + sizeof size, body.data(), size);
    return down.write_all({frame, kFrameOverhead + size}, wait, keep_waiting);
  }
  return down.write_all({reinterpret_cast<const char*>(&size), sizeof size}, wait, keep_waiting) &&
         down.write_all(body, wait, keep_waiting);
}

std::optional<std::span<const char>> ChunkReader::next(std::chrono::nanoseconds spin) {
  for (;;) {
    auto unread = std::span<const char>(input_).subspan(consumed_);
    auto size = peek_value<std::uint64_t>(unread);
    if (size && unread.size() - kFrameOverhead >= *size) {
      consumed_ += kFrameOverhead + *size;
      return unread.subspan(kFrameOverhead, *size);
    }
    input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(consumed_));
    consumed_ = 0;
    // Closed is looked at before reading: the bytes written before the close are then all read.
    bool closed = down_.closed();
    if (down_.read_into(input_) > 0) continue;
    if (!closed) {
      // After a sleep that nothing ended (an idle task process) it spins no more: the next
      // chunk is no nearer than before (docs/design.md, "Idle workers sleep").
      if (!down_.wait_readable(kIdleWait, spin)) spin = std::chrono::nanoseconds(0);
      continue;
    }
    if (input_.empty()) return std::nullopt;
    throw FrameError(
        size ? fmt::format("fiber: the chunk stream ended {} bytes into a chunk of {} bytes",
                           input_.size() - kFrameOverhead, *size)
             : fmt::format("fiber: the chunk stream ended {} bytes into a chunk's size",
                           input_.size()));
  }
}

void append_run_time(Bytes& answer, std::chrono::nanoseconds ran) {
  ByteWriter(answer).value(static_cast<std::int64_t>(ran.count()));
}

void write_answer(task_ring::Ring& up, std::span<const char> answer) {
  up.write_all(answer, kIdleWait, [] { return true; });
}

void AnswerReader::drop_consumed() {
  input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(consumed_));
  consumed_ = 0;
}

std::size_t AnswerReader::read_from(task_ring::Ring& up) {
  if (up.empty()) return 0;
  drop_consumed();
  std::size_t got = up.read_into(input_);
  received_ += got;
  return got;
}

void AnswerReader::add(std::span<const char> bytes) {
  drop_consumed();
  input_.insert(input_.end(), bytes.begin(), bytes.end());
  received_ += bytes.size();
}

std::span<const char> AnswerReader::unread() const {
  return std::span<const char>(input_).subspan(consumed_);
}

std::optional<std::span<const char>> AnswerReader::next_record() {
  auto unread = this->unread();
  auto status = peek_value<ItemStatus>(unread);
  if (!status || unread.size() - sizeof(ItemStatus) < status->size) return std::nullopt;
  std::size_t record = sizeof(ItemStatus) + status->size;
  consumed_ += record;
  return unread.first(record);
}

std::optional<std::chrono::nanoseconds> AnswerReader::next_run_time() {
  auto ran_ns = peek_value<std::int64_t>(unread());
  if (!ran_ns) return std::nullopt;
  consumed_ += sizeof *ran_ns;
  return std::chrono::nanoseconds(*ran_ns);
}

void AnswerReader::clear() {
  input_.clear();
  consumed_ = 0;
}

}  // namespace fiber::detail::task_frames
