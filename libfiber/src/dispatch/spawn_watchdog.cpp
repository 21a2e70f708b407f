#include "dispatch/spawn_watchdog.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "log.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// The time limit of a spawn: a spawn of 256 processes took 362 s on this loaded 2-core machine
// (1.4 s each), and one of 128 workers 56 s (docs/platform.md, "What a spawn costs"; the
// slow_start test): twice the slowest seen, per worker, and no less than the two minutes a
// spawned worker is given to say hello.
constexpr auto kSpawnTimePerWorker = 3s;
constexpr auto kSpawnTimeAtLeast = 120s;
// The master's exit status when its spawn never returned: sysexits.h's EX_UNAVAILABLE (fiberrun's
// own 126 and 127 mean a program that cannot be run, fiber-es's 1 and 2 an error and bad input).
constexpr int kSpawnHungStatus = 69;

}  // namespace

std::chrono::seconds spawn_time_limit(int count) {
  if (const char* value = std::getenv("FIBER_SPAWN_TIMEOUT")) {
    char* end = nullptr;
    long seconds = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && seconds > 0) return std::chrono::seconds(seconds);
    log::warn("FIBER_SPAWN_TIMEOUT={} is not a number of seconds; the default applies", value);
  }
  return std::max(kSpawnTimeAtLeast, kSpawnTimePerWorker * count);
}

SpawnWatchdog::SpawnWatchdog(std::string what, std::chrono::seconds limit)
    : what_(std::move(what)), limit_(limit), thread_([this] { watch(); }) {}

SpawnWatchdog::~SpawnWatchdog() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  returned_.notify_one();
  thread_.join();
}

void SpawnWatchdog::watch() {
  std::unique_lock lock(mutex_);
  if (returned_.wait_for(lock, limit_, [this] { return done_; })) return;
  log::error(
      "the spawn of {} has not returned after {} s, and MPI cannot abandon it: ending the job "
      "(a worker that cannot start, e.g. short of file descriptors or /dev/shm on its node: "
      "see MPI's messages above; FIBER_SPAWN_TIMEOUT sets the limit in seconds)",
      what_, limit_.count());
  // The spawning thread is inside MPI; MPI_Abort from this one was measured to end the master
  // and mpirun (docs/platform.md, "A spawn that cannot start never returns").
  MPI_Abort(MPI_COMM_WORLD, kSpawnHungStatus);
  std::_Exit(kSpawnHungStatus);
}

}  // namespace fiber::detail
