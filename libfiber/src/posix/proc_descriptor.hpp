// Another process's open file, reached through /proc/<pid>/fd/<n>: how the master opens what a
// worker on its host lends it (docs/platform.md, "The master can open a worker's memfd"). And the
// error both the opener and the maker of such files throw when a system call fails.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "fiber/errors.hpp"
#include "posix/unique_fd.hpp"

namespace fiber::posix {

// A fiber::Error "fiber: cannot WHAT: <errno's text>".
[[noreturn]] inline void throw_errno(const std::string& what) {
  throw Error(fmt::format("fiber: cannot {}: {}", what, std::strerror(errno)));
}

struct ProcDescriptor {
  UniqueFd fd;
  struct stat status;  // what the opened file is
  std::string path;    // for the caller's messages
};

// Opens descriptor `fd` of process `pid` with `flags` (a new open file description of the same
// file); throws fiber::Error naming the path if it cannot open or look at it.
inline ProcDescriptor open_descriptor_of(pid_t pid, int fd, int flags) {
  ProcDescriptor opened{UniqueFd(), {}, fmt::format("/proc/{}/fd/{}", pid, fd)};
  opened.fd.reset(::open(opened.path.c_str(), flags));
  if (!opened.fd) throw_errno("open " + opened.path);
  if (fstat(opened.fd.get(), &opened.status) != 0) throw_errno("look at " + opened.path);
  return opened;
}

}  // namespace fiber::posix
