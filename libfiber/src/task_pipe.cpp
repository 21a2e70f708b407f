#include "task_pipe.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "posix/write_all.hpp"

namespace fiber::detail::task_pipe {
namespace {

// How much one read asks for: what a pipe holds by default.
constexpr std::size_t kReadBytes = std::size_t{64} * 1024;
// A frame up to this size goes in one write (size and body together).
constexpr std::size_t kOneWriteBytes = 4096;

// Drops the bytes already taken, then reads once onto the end of `input`: the bytes read, 0 at
// end of file, -1 on an error (errno says which). Through a buffer on the stack: growing
// `input` first would zero it at every poll of an idle pipe.
ssize_t read_more(int fd, Bytes& input, std::size_t& consumed) {
  input.erase(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(consumed));
  consumed = 0;
  char buffer[kReadBytes];
  ssize_t got = ::read(fd, buffer, sizeof buffer);
  if (got > 0) input.insert(input.end(), buffer, buffer + got);
  return got;
}

template <class T>
std::optional<T> peek(std::span<const char> bytes) {
  if (bytes.size() < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

}  // namespace

bool write_chunk(int fd, std::span<const char> body) {
  std::uint64_t size = body.size();
  if (kFrameOverhead + size <= kOneWriteBytes) {
    char frame[kOneWriteBytes];
    std::memcpy(frame, &size, sizeof size);
    std::memcpy(frame + sizeof size, body.data(), size);
    return posix::write_all(fd, {frame, kFrameOverhead + size});
  }
  return posix::write_all(fd, {reinterpret_cast<const char*>(&size), sizeof size}) &&
         posix::write_all(fd, body);
}

std::optional<std::span<const char>> ChunkReader::next() {
  for (;;) {
    auto unread = std::span<const char>(input_).subspan(consumed_);
    auto size = peek<std::uint64_t>(unread);
    if (size && unread.size() - kFrameOverhead >= *size) {
      consumed_ += kFrameOverhead + *size;
      return unread.subspan(kFrameOverhead, *size);
    }
    ssize_t got = read_more(fd_, input_, consumed_);
    if (got > 0) continue;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      throw PipeError(std::string("fiber: cannot read the task pipe: ") + std::strerror(errno));
    }
    if (input_.empty()) return std::nullopt;
    throw PipeError(
        size ? fmt::format("fiber: the task pipe ended {} bytes into a chunk of {} bytes",
                           input_.size() - kFrameOverhead, *size)
             : fmt::format("fiber: the task pipe ended {} bytes into a chunk's size",
                           input_.size()));
  }
}

void append_run_time(Bytes& answer, std::chrono::nanoseconds ran) {
  append_raw(answer, static_cast<std::int64_t>(ran.count()));
}

bool write_answer(int fd, std::span<const char> answer) { return posix::write_all(fd, answer); }

bool AnswerReader::read_from(int fd) {
  for (;;) {
    ssize_t got = read_more(fd, input_, consumed_);
    if (got > 0) {
      received_ += static_cast<std::uint64_t>(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;  // end of file: the task process is gone
  }
}

std::span<const char> AnswerReader::unread() const {
  return std::span<const char>(input_).subspan(consumed_);
}

std::optional<std::span<const char>> AnswerReader::next_record() {
  auto unread = this->unread();
  auto status = peek<ItemStatus>(unread);
  if (!status || unread.size() - sizeof(ItemStatus) < status->size) return std::nullopt;
  std::size_t record = sizeof(ItemStatus) + status->size;
  consumed_ += record;
  return unread.first(record);
}

std::optional<std::chrono::nanoseconds> AnswerReader::next_run_time() {
  auto ran_ns = peek<std::int64_t>(unread());
  if (!ran_ns) return std::nullopt;
  consumed_ += sizeof *ran_ns;
  return std::chrono::nanoseconds(*ran_ns);
}

void AnswerReader::clear() {
  input_.clear();
  consumed_ = 0;
}

}  // namespace fiber::detail::task_pipe
