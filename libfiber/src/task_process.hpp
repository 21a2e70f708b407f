// A worker's task process: a child forked from the worker's MPI process that runs the tasks, so
// that a task that segfaults, aborts, calls exit or hangs takes down only this child. The worker
// sees its death at once (end of file on the pipe, then waitpid), reports it, and forks a new one
// when the next chunk comes. The child makes no MPI calls; it talks to its parent over two pipes:
// chunk bodies in (u64 size + bytes), item records out as each item finishes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>

#include "fiber/serialization.hpp"

namespace fiber::detail {

class TaskProcess {
 public:
  TaskProcess() = default;
  ~TaskProcess() { stop(); }
  TaskProcess(const TaskProcess&) = delete;
  TaskProcess& operator=(const TaskProcess&) = delete;

  bool running() const { return pid_ > 0; }
  void start();
  // Ends the child (its pipe closes; it exits) and reaps it.
  void stop();
  // Kills the child and says how it ended.
  std::string kill();

  // Sends a chunk's body to the child. False if the child is gone.
  bool send(std::span<const char> body);
  // Appends what the child has written to `out`, waiting at most `wait` for something. Returns
  // false when the child has died: then `death` says how (e.g. "killed by signal SIGSEGV").
  bool receive(Bytes& out, std::chrono::microseconds wait, std::string& death);

 private:
  std::string reap();
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
};

}  // namespace fiber::detail
