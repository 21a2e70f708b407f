// Elasticity and fault recovery: how long a pool takes to grow by 1 and by 8 workers when they
// must be spawned and when parked ones are unparked, to shrink, to recover from a task process
// that crashes, and to notice and replace a worker process that was killed outright.
//
//   fiberrun ./fiber_elasticity [--quick]
//
// Run it through fiberrun: under a plain mpirun a killed worker process ends the whole job.
// Prints CSV lines `measure,workers,seconds` on stdout, readable lines on stderr.
#include <signal.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

int nothing(int x) { return x; }
FIBER_TASK(nothing);

// Crashes (SIGSEGV) when `crash` is set: to time one crash and its retry.
int crash_if(int x, bool crash) {
  if (crash) raise(SIGSEGV);
  return x;
}
FIBER_TASK(crash_if);

int sleep_ms(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return milliseconds;
}
FIBER_TASK(sleep_ms);

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void report(const std::string& measure, int workers, double seconds, const char* note) {
  std::printf("%s,%d,%.6f\n", measure.c_str(), workers, seconds);
  std::fflush(stdout);
  std::fprintf(stderr, "%-28s %3d workers %9.1f ms   %s\n", measure.c_str(), workers, seconds * 1e3,
               note);
}

// Grows a pool of one worker by `count` and times it; the pool then does a round of work.
double time_growth(int count) {
  fiber::Pool pool({.processes = 1});
  auto start = Clock::now();
  pool.resize(1 + count);
  double seconds = since(start);
  pool.map(nothing, std::vector<int>(100), 1);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (argc > 1 && !quick) {
    std::fprintf(stderr, "usage: fiber_elasticity [--quick]\n");
    return 2;
  }
  try {
    // Fresh runtime: growing spawns. Afterwards the same growth unparks.
    report("grow_spawned", 1, time_growth(1), "one MPI_Comm_spawn");
    report("grow_unparked", 1, time_growth(1), "parked worker taken back");
    report("grow_spawned", 8, time_growth(8), "7 spawned, 1 unparked");
    report("grow_unparked", 8, time_growth(8), "all parked");
    {
      fiber::Pool pool({.processes = 9});
      auto start = Clock::now();
      pool.resize(1);
      report("shrink", 8, since(start), "8 workers parked");
    }

    // A crashing task: the time one crash and its retry add to a round of tasks.
    {
      fiber::Pool pool({.processes = 2});
      std::vector<std::tuple<int, bool>> calm(100, {1, false}), crashing = calm;
      pool.map(crash_if, calm, 1);
      auto start = Clock::now();
      pool.map(crash_if, calm, 1);
      double baseline = since(start);
      crashing[50] = {1, true};
      pool.resize(2);
      fiber::Pool once({.processes = 2, .max_retries = 0});
      start = Clock::now();
      try {
        once.map(crash_if, crashing, 1);
      } catch (const fiber::WorkerLost&) {
      }
      report("task_crash_recovery", 2, std::max(0.0, since(start) - baseline),
             "one segfault: report, fork a new task process");
    }

    // A worker process killed outright: noticed after worker_timeout of silence, its tasks
    // re-sent, a replacement started.
    for (auto timeout : quick ? std::vector{1000ms} : std::vector{1000ms, 3000ms}) {
      fiber::Pool pool({.processes = 2, .worker_timeout = timeout});
      auto pending = pool.map_async(sleep_ms, std::vector<int>(40, 50), 1);
      std::this_thread::sleep_for(100ms);
      auto victim = pool.workers().at(0);
      auto start = Clock::now();
      kill(static_cast<pid_t>(victim.pid), SIGKILL);
      while (pool.stats().workers_lost == 0) std::this_thread::sleep_for(1ms);
      double detected = since(start);
      while (pool.size() < 2) std::this_thread::sleep_for(1ms);
      double replaced = since(start);
      pending.get();
      std::string suffix = "_timeout_" + std::to_string(timeout.count()) + "ms";
      report("killed_worker_detected" + suffix, 2, detected, "silence past worker_timeout");
      report("killed_worker_replaced" + suffix, 2, replaced, "and a new worker serving");
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fiber_elasticity: %s\n", error.what());
    return 1;
  }
  return 0;
}
