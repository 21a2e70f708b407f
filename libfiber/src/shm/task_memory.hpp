// The memory a worker shares with its task process: a progress page, then the down ring (chunks)
// and the up ring (answers) of task_ring.hpp. It lives in a memfd, so that the master can map it
// too and reach the task process with no worker in between (docs/design.md, "The lane"). A new
// task process gets a new one: nothing written for a dead one can reach it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "posix/mapped_region.hpp"
#include "posix/unique_fd.hpp"
#include "shm/task_ring.hpp"

namespace fiber::detail {

// Written by the task process, read by whoever sends it chunks.
struct TaskProgress {
  std::atomic<std::uint64_t> chunk{0};           // id of the chunk it runs, or ran last
  std::atomic<std::uint32_t> item{0};            // index in that chunk
  std::atomic<std::int64_t> item_started_ns{0};  // CLOCK_MONOTONIC, as steady_clock
  std::atomic<std::uint64_t> answered{0};        // id of the last chunk whose answer it wrote
  // Written by the worker: 1 once it lent the memory to the master (a lane).
  std::atomic<std::uint32_t> lent{0};

  std::chrono::steady_clock::time_point item_started() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(item_started_ns.load(std::memory_order_acquire)));
  }
};
// The mapping holds a TaskProgress made in place and never destroyed: unmapping it is enough.
static_assert(std::is_trivially_destructible_v<TaskProgress>);

// Each ring's size. A task process flushes its records before they reach it, so a flush fits.
inline constexpr std::size_t kTaskRingBytes = std::size_t{256} * 1024;

class TaskMemory {
 public:
  // A fresh memory in a new memfd, its rings empty (throws fiber::Error if it cannot).
  static TaskMemory create();
  // The memory `fd` of process `pid` made by create(), opened through /proc (throws fiber::Error
  // with the reason if it cannot: another user's process, a /proc that hides it).
  static TaskMemory open(pid_t pid, int fd);

  TaskMemory(TaskMemory&&) noexcept = default;
  TaskMemory& operator=(TaskMemory&&) noexcept = default;

  int fd() const { return fd_.get(); }
  TaskProgress& progress() const { return *static_cast<TaskProgress*>(region_.data()); }
  task_ring::Ring& down() { return *down_; }
  task_ring::Ring& up() { return *up_; }
  const task_ring::Ring& down() const { return *down_; }
  const task_ring::Ring& up() const { return *up_; }

  // The bytes a memory takes.
  static std::size_t size();

 private:
  TaskMemory(posix::UniqueFd fd, posix::MappedRegion region);
  posix::UniqueFd fd_;
  posix::MappedRegion region_;
  std::optional<task_ring::Ring> down_;
  std::optional<task_ring::Ring> up_;
};

}  // namespace fiber::detail
