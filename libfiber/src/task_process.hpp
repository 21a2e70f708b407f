// A worker's task process: a child forked from the worker's MPI process that runs the tasks, so
// that a task that segfaults, aborts, calls exit or hangs takes down only this child. The worker
// sees its death (end of file on a pipe that only the child holds open, then waitpid), reports
// it, and forks a new one when the next chunk comes. The child makes no MPI calls; it talks to
// its parent over two rings in shared memory (task_ring.hpp, in the format of task_pipe.hpp):
// chunks in, read several at a time; item records out at the end of each chunk (and every few
// milliseconds in a long one), then the chunk's run time. A page of the same mapping says which
// item it is running and since when, with no system call per item: that names the item that
// crashed or hung.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "posix/mapped_region.hpp"
#include "posix/unique_fd.hpp"
#include "task_pipe.hpp"
#include "task_ring.hpp"

namespace fiber::detail {

class TaskProcess {
 public:
  // Written by the child, read by the worker.
  struct Progress {
    std::atomic<std::uint64_t> chunk{0};           // id of the chunk it runs
    std::atomic<std::uint32_t> item{0};            // index in that chunk
    std::atomic<std::int64_t> item_started_ns{0};  // CLOCK_MONOTONIC, as steady_clock here
  };

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

  // Whether a chunk's body fits in the ring's free room now (sent, it waits for no one).
  bool fits(std::size_t body) const;
  // Sends a chunk's body to the child, waiting for room in the ring if need be (taking in the
  // child's answers meanwhile). False if the child is gone.
  bool send(std::span<const char> body);
  // Reads into `answers` what the child has written, spinning briefly and then sleeping at most
  // `wait` for something. Returns false when the child has died: then `death` says how (e.g.
  // "killed by signal SIGSEGV").
  bool receive(task_pipe::AnswerReader& answers, std::chrono::microseconds wait,
               std::string& death);

  std::uint64_t current_chunk() const { return progress().chunk.load(); }
  std::uint32_t current_item() const { return progress().item.load(); }
  std::chrono::steady_clock::time_point item_started() const;

 private:
  // The mapping holds a Progress made in place and never destroyed: unmapping it is enough.
  static_assert(std::is_trivially_destructible_v<Progress>);
  Progress& progress() const { return *static_cast<Progress*>(shared_.data()); }
  void map_shared();
  bool child_gone() const;
  std::string reap();
  pid_t pid_ = -1;
  posix::UniqueFd from_child_;  // written by nobody: its end of file says that the child is gone
  // The progress page, then the down and up rings; shared with every child, mapped at the first
  // start.
  posix::MappedRegion shared_;
  std::optional<task_ring::Ring> down_;
  std::optional<task_ring::Ring> up_;
  Bytes taken_while_sending_;  // answers read while send() waited for room
};

}  // namespace fiber::detail
