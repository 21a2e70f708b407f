// The master's CPU time per task message against the number of workers: empty tasks mapped at
// chunksize 1 (one message each way per task) over pools of 4 to 128 workers, with the tasks in
// the worker processes (Isolation::none) and in their task processes (the default). CPU time of
// the master process, not wall time: on 2 cores the workers compete with the master, and what
// must stay flat in n is the master's own work per message. The master's waits for answers are
// part of it (it spins briefly before it sleeps), and they vary with how the workers get the
// cores: each figure is the least of kRepeats maps, the least disturbed one. One CSV line each on
// stdout, a human line on stderr:
//
//   isolation,workers,tasks,master_cpu_us_per_task,ratio_to_fewest,wall_us_per_task
//
// ratio_to_fewest is the figure over that of the fewest workers of the same isolation (the
// target: within 1.5 at 128 workers against 4); wall_us_per_task is the wall time of the same map,
// to show how much of it the master was busy.
//
//   ./fiber_master_cost [--workers 4,8,...] [--tasks N] [--isolation none|process]
//
// One isolation per run: the workers of a run stay (parked) for its later pools, and a parked
// worker is listened to as well, so a first pool must not inherit another mode's workers.
//
// Run it directly: fiber::Runtime sets the MPI defaults this machine needs (no mpirun).
#include <time.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "cpu_time.hpp"

int empty(int x) { return x; }
FIBER_TASK(empty);

namespace {

constexpr int kRepeats = 5;
constexpr std::size_t kWarmUpTasks = 2000;
constexpr std::size_t kDefaultTasks = 20'000;

using fiber_benchmarks::process_cpu_seconds;

std::vector<int> numbers(std::size_t count) {
  std::vector<int> items(count);
  std::iota(items.begin(), items.end(), 0);
  return items;
}

struct PerTask {
  double cpu_us = 0;
  double wall_us = 0;
};

// The master's CPU microseconds per task of one map at chunksize 1 (and the map's wall time), the
// least of kRepeats.
PerTask master_us_per_task(fiber::Pool& pool, std::size_t tasks) {
  const std::vector<int> items = numbers(tasks);
  if (pool.map(empty, numbers(kWarmUpTasks), 1) != numbers(kWarmUpTasks)) {
    throw std::runtime_error("map returned a wrong result");
  }
  PerTask least;
  for (int i = 0; i < kRepeats; ++i) {
    double start = process_cpu_seconds();
    auto wall_start = std::chrono::steady_clock::now();
    std::vector<int> results = pool.map(empty, items, 1);
    double cpu = process_cpu_seconds() - start;
    std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
    if (results != items) throw std::runtime_error("map returned a wrong result");
    double us = cpu * 1e6 / static_cast<double>(tasks);
    if (i == 0 || us < least.cpu_us) {
      least = {us, wall.count() * 1e6 / static_cast<double>(tasks)};
    }
  }
  return least;
}

void measure(fiber::Isolation isolation, const std::vector<int>& worker_counts, std::size_t tasks) {
  const char* name = isolation == fiber::Isolation::none ? "none" : "process";
  double fewest = 0;
  for (int workers : worker_counts) {
    fiber::PoolOptions options;
    options.processes = workers;
    options.isolation = isolation;
    fiber::Pool pool(options);
    PerTask figure = master_us_per_task(pool, tasks);
    if (fewest == 0) fewest = figure.cpu_us;
    std::printf("%s,%d,%zu,%.3f,%.3f,%.3f\n", name, workers, tasks, figure.cpu_us,
                figure.cpu_us / fewest, figure.wall_us);
    std::fflush(stdout);
    std::fprintf(
        stderr, "isolation %-7s workers %4d: master %7.2f us CPU per task (x%.2f), %7.2f us wall\n",
        name, workers, figure.cpu_us, figure.cpu_us / fewest, figure.wall_us);
    pool.close();
    pool.join();
  }
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  CLI::App app("The master's CPU per task message against the number of workers",
               "fiber_master_cost");
  std::vector<int> worker_counts{4, 8, 16, 32, 64, 128};
  std::size_t tasks = kDefaultTasks;
  std::string isolation = "none";
  app.add_option("--workers", worker_counts, "worker counts, fewest first")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--tasks", tasks, "tasks per map")->check(CLI::PositiveNumber);
  app.add_option("--isolation", isolation, "where the tasks run: none (the worker) or process")
      ->check(CLI::IsMember({"none", "process"}));
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  if (!std::is_sorted(worker_counts.begin(), worker_counts.end())) {
    std::fprintf(stderr, "fiber_master_cost: --workers must be given fewest first\n");
    return 2;
  }
  std::printf("isolation,workers,tasks,master_cpu_us_per_task,ratio_to_fewest,wall_us_per_task\n");
  measure(isolation == "none" ? fiber::Isolation::none : fiber::Isolation::process, worker_counts,
          tasks);
  return 0;
}
