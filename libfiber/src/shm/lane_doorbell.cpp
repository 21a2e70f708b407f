#include "shm/lane_doorbell.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>

#include "fiber/errors.hpp"
#include "posix/proc_descriptor.hpp"

namespace fiber::detail {
namespace {

// A ring is one byte: the doorbell is drained this many rings per read.
constexpr std::size_t kRingsPerRead = 64;

}  // namespace

LaneDoorbell::LaneDoorbell() {
  auto pipe = posix::open_pipe(O_CLOEXEC | O_NONBLOCK);
  if (!pipe) posix::throw_errno("make a lane's doorbell (pipe)");
  pipe_ = std::move(*pipe);
}

bool LaneDoorbell::answer() const {
  char rings[kRingsPerRead];
  bool rung = false;
  while (::read(pipe_.read.get(), rings, sizeof rings) > 0) rung = true;
  return rung;
}

LaneDoorbellRing LaneDoorbellRing::open(pid_t pid, int fd) {
  auto opened = posix::open_descriptor_of(pid, fd, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (!S_ISFIFO(opened.status.st_mode)) {
    throw Error(fmt::format("fiber: {} is not a worker's doorbell (not a pipe)", opened.path));
  }
  return LaneDoorbellRing(std::move(opened.fd));
}

void LaneDoorbellRing::ring() const {
  const char rung = 1;
  // A full pipe (EAGAIN) holds rings the worker has not taken: it wakes anyway.
  [[maybe_unused]] auto written = ::write(fd_.get(), &rung, 1);
}

}  // namespace fiber::detail
