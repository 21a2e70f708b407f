// Ends the job when an MPI_Comm_spawn does not return in time. On Open MPI 4.1 a spawn whose
// processes fail in MPI's start-up (on a node whose descriptors or /dev/shm the master cannot
// check beforehand) never returns, and MPI has no way to abandon it: the master's thread stays
// inside the call (docs/platform.md, "A spawn that cannot start never returns"). The watchdog
// says so in one line and aborts the job (MPI_Abort, which also ends mpirun), from a thread of
// its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace fiber::detail {

// How long a spawn of `count` workers may take: FIBER_SPAWN_TIMEOUT (seconds) when set, else
// from what spawns were measured to take on a loaded machine.
std::chrono::seconds spawn_time_limit(int count);

class SpawnWatchdog {
 public:
  // Watches the spawn of `what` (e.g. "workers 0 to 15") from now on, for `limit`.
  SpawnWatchdog(std::string what, std::chrono::seconds limit);
  // The spawn returned (or threw): the watch ends.
  ~SpawnWatchdog();
  SpawnWatchdog(const SpawnWatchdog&) = delete;
  SpawnWatchdog& operator=(const SpawnWatchdog&) = delete;

 private:
  void watch();

  const std::string what_;
  const std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable returned_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace fiber::detail
