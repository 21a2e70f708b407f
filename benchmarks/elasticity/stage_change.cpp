// Stage changes within one allocation: a stage of narrow workers (one core each) and a stage of
// wide ones alternate, and each change is timed from the end of a stage (its pool destroyed, its
// workers parked) to the next stage's pool having mapped one item per worker. After the first two
// stages no worker is spawned: the wide ones are parked narrow ones re-shaped, their node's other
// parked ones lending them their slots (docs/design.md, "Parked workers lend their slots").
//
//   fiber_stage_change NARROW WIDE WIDE_CORES CHANGES   (CHANGES round trips, narrow to wide and
//                                                       back, after the first stage)
//
// Run it where the allocation has slots (a hostfile, a batch job): on one machine fiber
// oversubscribes (benchmarks/elasticity/stage_change.py runs it on simulated nodes). Prints each
// change on stderr, then the median of the changes after the first two stages, to wide and to
// narrow workers, as CSV lines `measure,workers,seconds` on stdout (the elasticity report's
// rows); fails (status 1) if a stage after the second spawned.
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

int worker_pid(int) { return static_cast<int>(::getpid()); }
FIBER_TASK(worker_pid);

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A map of one item per worker, chunksize 1: the stage at work.
void first_round(fiber::Pool& pool, int workers) {
  pool.map(worker_pid, std::vector<int>(static_cast<std::size_t>(workers)), 1);
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: fiber_stage_change NARROW WIDE WIDE_CORES CHANGES\n");
    return 2;
  }
  const int narrow = std::atoi(argv[1]), wide = std::atoi(argv[2]);
  const int wide_cores = std::atoi(argv[3]), changes = std::atoi(argv[4]);
  auto stage =
      std::make_unique<fiber::Pool>(fiber::PoolOptions{.processes = narrow, .shape = {.cores = 1}});
  first_round(*stage, narrow);
  int spawned_by_stage_two = 0;
  std::vector<double> to_wide_seconds, to_narrow_seconds;  // the changes after the first
  for (int change = 1; change <= changes * 2; ++change) {
    const bool to_wide = change % 2 == 1;
    const int workers = to_wide ? wide : narrow;
    auto start = Clock::now();
    stage.reset();
    stage = std::make_unique<fiber::Pool>(
        fiber::PoolOptions{.processes = workers, .shape = {.cores = to_wide ? wide_cores : 1}});
    first_round(*stage, workers);
    double seconds = since(start);
    if (change == 1) spawned_by_stage_two = runtime.worker_count();
    if (change > 1) (to_wide ? to_wide_seconds : to_narrow_seconds).push_back(seconds);
    std::fprintf(stderr, "change %2d to %d %s workers: %8.1f ms, %d workers started so far\n",
                 change, workers, to_wide ? "wide" : "narrow", seconds * 1e3,
                 runtime.worker_count());
  }
  std::printf("stage_change_to_wide,%d,%.6f\n", wide, median(to_wide_seconds));
  std::printf("stage_change_to_narrow,%d,%.6f\n", narrow, median(to_narrow_seconds));
  if (runtime.worker_count() != spawned_by_stage_two) {
    std::fprintf(stderr, "fiber_stage_change: %d workers spawned after the second stage\n",
                 runtime.worker_count() - spawned_by_stage_two);
    return 1;
  }
  return 0;
}
