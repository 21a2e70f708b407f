// A worker's task process: a child forked from the worker's MPI process that runs the tasks, so
// that a task that segfaults, aborts, calls exit or hangs takes down only this child. The worker
// sees its death at once (end of file on the pipe, then waitpid), reports it, and forks a new one
// when the next chunk comes. The child makes no MPI calls; it talks to its parent over two pipes
// (task_pipe.hpp): chunks in, read several at a time; item records out at the end of each chunk
// (and every few milliseconds in a long one), then the chunk's run time. A page of shared memory
// says which item it is running and since when, with no system call per item: that names the
// item that crashed or hung.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "posix/mapped_region.hpp"
#include "posix/unique_fd.hpp"
#include "task_pipe.hpp"

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

  // Sends a chunk's body to the child. False if the child is gone. The pipe holds 64 KiB: a
  // body sent while the child still runs earlier chunks must fit in what is left of it, or both
  // processes could block writing to each other.
  bool send(std::span<const char> body);
  // Reads into `answers` what the child has written, waiting at most `wait` for something.
  // Returns false when the child has died: then `death` says how (e.g. "killed by signal
  // SIGSEGV").
  bool receive(task_pipe::AnswerReader& answers, std::chrono::microseconds wait,
               std::string& death);

  std::uint64_t current_chunk() const { return progress().chunk.load(); }
  std::uint32_t current_item() const { return progress().item.load(); }
  std::chrono::steady_clock::time_point item_started() const;

 private:
  // The page holds a Progress made in place and never destroyed: unmapping it is enough.
  static_assert(std::is_trivially_destructible_v<Progress>);
  Progress& progress() const { return *static_cast<Progress*>(progress_page_.data()); }
  std::string reap();
  pid_t pid_ = -1;
  posix::UniqueFd to_child_;
  posix::UniqueFd from_child_;
  posix::MappedRegion progress_page_;  // shared with every child; mapped at the first start
};

}  // namespace fiber::detail
