// write(2) until every byte is written, through EINTR.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <span>

namespace fiber::posix {

// False if a write failed (errno says why) or wrote nothing.
inline bool write_all(int fd, std::span<const char> bytes) {
  while (!bytes.empty()) {
    ssize_t put = ::write(fd, bytes.data(), bytes.size());
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    bytes = bytes.subspan(static_cast<std::size_t>(put));
  }
  return true;
}

}  // namespace fiber::posix
