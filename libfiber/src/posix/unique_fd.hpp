// A file descriptor with one owner, which closes it; and a pipe made of two.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <utility>

namespace fiber::posix {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  int release() noexcept { return std::exchange(fd_, -1); }
  // Closes the descriptor held, if any, and holds `fd` instead.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// The two ends of an OS pipe(2) (not a fiber::Pipe).
struct PipeEnds {
  UniqueFd read;
  UniqueFd write;
};

// pipe2(2) with these flags (e.g. O_CLOEXEC); nothing if it failed, with errno saying why.
inline std::optional<PipeEnds> open_pipe(int flags) {
  int ends[2];
  if (pipe2(ends, flags) != 0) return std::nullopt;
  return PipeEnds{UniqueFd(ends[0]), UniqueFd(ends[1])};
}

}  // namespace fiber::posix
