// An elastic pool: resize() grows and shrinks it while it runs, stats() counts what it did.
// Shrinking parks workers (they idle at ~0 % CPU); growing takes parked workers back before it
// spawns new ones, so a pool that breathes costs no spawns after the first growth.
//
//   fiberrun -n 1 ./example-elastic-pool
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr int kItems = 60;
constexpr auto kTaskTime = std::chrono::milliseconds(2);

}  // namespace

// Stands in for real work: takes a little time, then returns its item.
int slow_identity(int item) {
  std::this_thread::sleep_for(kTaskTime);
  return item;
}
FIBER_TASK(slow_identity);

namespace {

void report(const char* when, const fiber::Pool& pool) {
  fiber::PoolStats stats = pool.stats();
  std::printf("%s: workers %d, parked %d, tasks completed %llu\n", when, stats.workers,
              stats.parked_workers, static_cast<unsigned long long>(stats.tasks_completed));
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  fiber::Pool pool({.processes = 1});
  std::vector<int> items(kItems);
  std::iota(items.begin(), items.end(), 0);
  report("start", pool);

  // Grow while a call is running: the new workers take part of its items.
  auto pending = pool.map_async(slow_identity, items, 1);
  pool.resize(3);
  bool exact = pending.get() == items;
  report("grown to 3", pool);

  // Shrink: two workers park (a worker with work in flight parks once it is done).
  pool.resize(1);
  exact = exact && pool.map(slow_identity, items) == items;
  report("shrunk to 1", pool);

  // Grow again: the parked workers come back; nothing is spawned.
  int spawned_before = runtime.worker_count();
  pool.resize(3);
  exact = exact && pool.map(slow_identity, items) == items;
  report("grown to 3 again", pool);
  std::printf("workers spawned by the last growth: %d\n", runtime.worker_count() - spawned_before);
  std::printf("every result exact: %s\n", exact ? "yes" : "no");
  return exact ? 0 : 1;
}
