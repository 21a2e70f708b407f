#include "lane_doorbell.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw Error(fmt::format("fiber: cannot {}: {}", what, std::strerror(errno)));
}

}  // namespace

LaneDoorbell::LaneDoorbell() {
  auto pipe = posix::open_pipe(O_CLOEXEC | O_NONBLOCK);
  if (!pipe) fail("make a lane's doorbell (pipe)");
  pipe_ = std::move(*pipe);
}

bool LaneDoorbell::answer() const {
  char rings[64];
  bool rung = false;
  while (::read(pipe_.read.get(), rings, sizeof rings) > 0) rung = true;
  return rung;
}

LaneDoorbellRing LaneDoorbellRing::open(pid_t pid, int fd) {
  std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  posix::UniqueFd opened(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!opened) fail("open " + path);
  struct stat status {};
  if (fstat(opened.get(), &status) != 0) fail("look at " + path);
  if (!S_ISFIFO(status.st_mode)) {
    throw Error(fmt::format("fiber: {} is not a worker's doorbell (not a pipe)", path));
  }
  return LaneDoorbellRing(std::move(opened));
}

void LaneDoorbellRing::ring() const {
  const char rung = 1;
  // A full pipe (EAGAIN) holds rings the worker has not taken: it wakes anyway.
  [[maybe_unused]] auto written = ::write(fd_.get(), &rung, 1);
}

}  // namespace fiber::detail
