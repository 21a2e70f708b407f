// The framework overhead test of the Fiber paper (its "sleep test") on a fiber pool of 5 workers
// (--workers), the protocol of benchmarks/overhead/protocol.py: tasks that sleep for a fixed
// time, as many as make the ideal total 1 s, run as rounds of one apply_async per worker (the
// paper's mode) and as one batch map (automatic chunks). First with tasks in each worker's task
// process (fiber, the default Isolation::process), then in the worker process itself
// (fiber-inline, Isolation::none). Best of --repeats after a warm-up; one CSV line each on stdout:
//
//   framework,mode,task_seconds,tasks,workers,seconds,measured_tasks
//
// Run it directly (fiber::Runtime sets the MPI defaults): ./fiber_overhead [--help]
#include <CLI/CLI.hpp>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "protocol_options.hpp"

// The task: sleep, as the paper's time.sleep(d).
std::int64_t sleep_microseconds(std::int64_t microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
  return microseconds;
}
FIBER_TASK(sleep_microseconds);

namespace {

constexpr std::size_t kWarmUpRounds = 10;

struct Options : fiber_benchmarks::ProtocolOptions {
  int workers = 5;  // the paper's
  std::vector<std::string> modes{"apply_async", "map"};
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void rounds_of_apply_async(fiber::Pool& pool, std::int64_t microseconds, std::size_t tasks) {
  std::vector<fiber::AsyncResult<std::int64_t>> pending;
  const auto workers = static_cast<std::size_t>(pool.size());
  for (std::size_t round = 0; round < tasks / workers; ++round) {
    pending.clear();
    for (std::size_t i = 0; i < workers; ++i) {
      pending.push_back(pool.apply_async(sleep_microseconds, microseconds));
    }
    for (auto& result : pending) result.get();
  }
}

void batch_map(fiber::Pool& pool, std::int64_t microseconds, std::size_t tasks) {
  pool.map(sleep_microseconds, std::vector<std::int64_t>(tasks, microseconds));
}

void measure(fiber::Pool& pool, const char* framework, const Options& options) {
  for (const auto& mode : options.modes) {
    auto run = mode == "map" ? batch_map : rounds_of_apply_async;
    for (double task_seconds : options.task_seconds) {
      auto microseconds = static_cast<std::int64_t>(std::llround(task_seconds * 1e6));
      const auto workers = static_cast<std::size_t>(options.workers);
      auto tasks = static_cast<std::size_t>(
          fiber_benchmarks::protocol_tasks(options, task_seconds, options.workers));
      run(pool, microseconds, std::min(tasks, workers * kWarmUpRounds));
      double best = 0;
      for (int i = 0; i < options.repeats; ++i) {
        auto start = std::chrono::steady_clock::now();
        run(pool, microseconds, tasks);
        double seconds = seconds_since(start);
        best = i == 0 ? seconds : std::min(best, seconds);
      }
      std::printf("%s,%s,%g,%zu,%d,%.6f,%zu\n", framework, mode.c_str(), task_seconds, tasks,
                  options.workers, best, tasks);
      std::fflush(stdout);
      std::fprintf(stderr, "%-16s %-11s %8.1f ms x %6zu tasks %8.3f s\n", framework, mode.c_str(),
                   task_seconds * 1e3, tasks, best);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  Options options;
  CLI::App app{"The Fiber paper's framework overhead test (sleep tasks, 5 workers) on fiber pools",
               "fiber_overhead"};
  app.add_option("--workers", options.workers,
                 "workers (the paper's 5; on a machine with fewer cores than processes, fewer "
                 "show the cost of a round without the contention)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  fiber_benchmarks::add_protocol_options(app, options);
  app.add_option("--modes", options.modes, "apply_async (the paper's rounds) and/or map")
      ->check(CLI::IsMember({"apply_async", "map"}))
      ->capture_default_str();
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  try {
    for (auto isolation : {fiber::Isolation::process, fiber::Isolation::none}) {
      fiber::Pool pool({.processes = options.workers, .isolation = isolation});
      measure(pool, isolation == fiber::Isolation::none ? "fiber-inline" : "fiber", options);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fiber_overhead: %s\n", error.what());
    return 1;
  }
  return 0;
}
