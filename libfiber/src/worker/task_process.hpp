// A worker's task process: a child forked from the worker's MPI process that runs the tasks, so
// that a task that segfaults, aborts, calls exit or hangs takes down only this child. The worker
// sees its death (end of file on a pipe that only the child holds open, then waitpid), reports
// it, and forks a new one when the next chunk comes. The child makes no MPI calls; it talks to
// its parent over two rings in shared memory (task_ring.hpp, in the format of task_frames.hpp):
// chunks in, read several at a time; item records out at the end of each chunk (and every few
// milliseconds in a long one), then the chunk's run time. A page of the same mapping says which
// item it is running and since when, with no system call per item: that names the item that
// crashed or hung. Each child gets a memory of its own (task_memory.hpp), which the worker may
// lend to the master (lend()): from then on the master writes the chunks and reads the answers,
// and the worker only watches the child's death.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "posix/unique_fd.hpp"
#include "shm/task_memory.hpp"
#include "wire/task_frames.hpp"

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
  // Kills the child (and the processes its tasks started: its process group) and says how it
  // ended.
  std::string kill();

  // Whether a chunk's body fits in the ring's free room now (sent, it waits for no one).
  bool fits(std::size_t body) const;
  // Sends a chunk's body to the child, waiting for room in the ring if need be (taking in the
  // child's answers meanwhile, and calling `while_waiting`: a large body takes as long as the
  // child takes to read it, seconds on a busy node). False if the child is gone.
  bool send(std::span<const char> body, const std::function<void()>& while_waiting = {});
  // Reads into `answers` what the child has written, spinning briefly and then sleeping at most
  // `wait` for something. Returns false when the child has died: then `death` says how (e.g.
  // "killed by signal SIGSEGV").
  bool receive(task_frames::AnswerReader& answers, std::chrono::microseconds wait,
               std::string& death);
  // Sleeps, without spinning, until the child writes an answer or dies, `doorbell` (a descriptor,
  // or -1) is readable, or `timeout` passes; whether `doorbell` is readable. receive() then takes
  // what came. A worker whose task runs long sleeps so, with the master's ring as its doorbell
  // (docs/design.md, "Idle workers sleep").
  bool sleep_until_news(std::chrono::nanoseconds timeout, int doorbell);

  std::uint64_t current_chunk() const { return progress().chunk.load(); }
  std::uint32_t current_item() const { return progress().item.load(); }
  // The running (or last) child's progress page.
  const TaskProgress& progress() const { return memory_->progress(); }

  // --- a child whose memory is lent to the master (who then alone writes and reads its rings) ---
  // The descriptor of the running child's memory in this process, for /proc/<pid>/fd.
  int memory_fd() const { return memory_->fd(); }
  // Marks the memory lent: the child waits for chunks as a lane's (task_process.cpp, kLentSpin).
  void lend();
  // Whether the child has a chunk to run or runs one, as far as its memory says.
  bool busy() const;
  // Sleeps until the child dies, `wakes` (a descriptor, or -1) is readable, or `timeout` passes;
  // whether the child died (then death() says how).
  bool wait_for_death(std::chrono::milliseconds timeout, int wakes = -1) const;
  // Reaps a child that died: how it ended.
  std::string death() { return reap(); }
  // Children started from now on may use at most `bytes` of memory (0: no limit): see
  // task_process.cpp, kMemoryLimit.
  void limit_memory(std::uint64_t bytes) { memory_limit_ = bytes; }

 private:
  bool child_gone() const;
  std::string reap();
  // SIGKILL to the child's process group: the child and what its tasks started.
  void kill_group() const;
  pid_t pid_ = -1;
  posix::UniqueFd from_child_;  // written by nobody: its end of file says that the child is gone
  // An eventfd that the child's answers make readable while this process sleeps on it
  // (sleep_until_news): the up ring's reader doorbell, one for every child.
  posix::UniqueFd answer_doorbell_;
  // The running child's progress page and rings, made fresh for each child.
  std::optional<TaskMemory> memory_;
  Bytes taken_while_sending_;       // answers read while send() waited for room
  std::uint64_t memory_limit_ = 0;  // the children's, in bytes (0: none)
};

}  // namespace fiber::detail
