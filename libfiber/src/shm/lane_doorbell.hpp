// How the master wakes a worker that lent its task process (docs/design.md, "The lane"): the
// worker sleeps in poll on a pipe of its own, the doorbell, and the master, which opened the
// same pipe through /proc/<worker>/fd as it opened the task process's memory, writes a byte to
// it after every message it sends that worker. So a lent worker sleeps until told instead of
// waking every millisecond to look at MPI, which would preempt the task processes on the cores
// they run on (docs/design.md, "The lane").
#pragma once

#include <sys/types.h>

#include "posix/unique_fd.hpp"

namespace fiber::detail {

// The worker's end: a pipe whose read end it polls.
class LaneDoorbell {
 public:
  // Throws fiber::Error if the pipe cannot be made.
  LaneDoorbell();
  // What to poll for a ring.
  int fd() const { return pipe_.read.get(); }
  // The descriptor number the master opens (/proc/<pid>/fd/<number>).
  int lent_fd() const { return pipe_.write.get(); }
  // Takes every ring so far; true if there was one.
  bool answer() const;

 private:
  posix::PipeEnds pipe_;
};

// The master's end: the worker's pipe, opened through /proc.
class LaneDoorbellRing {
 public:
  // Opens descriptor `fd` of process `pid` (throws fiber::Error if it cannot, or if it is not a
  // pipe). Opened for reading too, so that a dead worker's pipe still has a reader: a write
  // never raises SIGPIPE, it only finds the pipe full (and nobody is waiting then).
  static LaneDoorbellRing open(pid_t pid, int fd);
  // Wakes the worker (a full pipe already will).
  void ring() const;

 private:
  explicit LaneDoorbellRing(posix::UniqueFd fd) : fd_(std::move(fd)) {}
  posix::UniqueFd fd_;
};

}  // namespace fiber::detail
