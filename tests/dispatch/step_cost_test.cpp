// What a dispatch costs while every worker is busy and work is queued (the state of a long map
// between answers) must not grow with the pool: a pool of kManyWorkers worker records against one
// of kFewWorkers (records whose channels lead back to this process, as in scheduling_test), the
// CPU time of kDispatches dispatches each. The ratio allowed is far above what noise gives and
// far below what a dispatch that walks every worker costs (benchmarks/README.md,
// dispatch_step_cost's table). Runs as one MPI process.
#include <gtest/gtest.h>
#include <mpi.h>
#include <time.h>

#include <chrono>
#include <memory>
#include <vector>

#include "dispatch/scheduler.hpp"
#include "dispatch/worker_set.hpp"
#include "self_workers.hpp"

namespace fiber::detail {
namespace {

constexpr int kFewWorkers = 4;
constexpr int kManyWorkers = 1024;
constexpr int kDispatches = 100'000;
constexpr double kFlatEnough = 10;
constexpr std::size_t kQueuedItems = 100'000;

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// CPU seconds of kDispatches dispatches to a pool of `size` busy workers with work queued.
double busy_dispatch_seconds(int size) {
  WorkerSet workers{WorkerSpawner({})};
  Scheduler scheduler{workers};
  auto pool = std::make_shared<PoolHandle>(PoolOptions{.processes = size});
  std::vector<std::shared_ptr<PoolHandle>> pools{pool};
  for (int i = 0; i < size; ++i) {
    self_workers::adopt(workers);
    workers.join(pool);
  }
  std::vector<std::uint64_t> offsets(kQueuedItems + 1);
  for (std::size_t i = 0; i <= kQueuedItems; ++i) offsets[i] = i;
  scheduler.enqueue(*pool,
                    std::make_shared<Job>("task", Bytes(kQueuedItems, 'x'), std::move(offsets), 1));
  auto now = Clock::now();
  EXPECT_TRUE(scheduler.dispatch(pools, now));  // one chunk each: all busy from now on
  for (int id : pool->workers) EXPECT_EQ(workers[id].in_flight.size(), 1u);
  auto later = now + std::chrono::seconds(1);  // no answer is recent: nobody takes more
  double start = process_cpu_seconds();
  for (int i = 0; i < kDispatches; ++i) EXPECT_FALSE(scheduler.dispatch(pools, later));
  double seconds = process_cpu_seconds() - start;
  scheduler.terminate(*pool);
  self_workers::drain(workers);
  return seconds;
}

TEST(StepCost, ADispatchToBusyWorkersCostsTheSameForAnyPoolSize) {
  double few = busy_dispatch_seconds(kFewWorkers);
  double many = busy_dispatch_seconds(kManyWorkers);
  EXPECT_LT(many, kFlatEnough * few) << "a dispatch to " << kManyWorkers << " busy workers took "
                                     << many / few << " times as long as one to " << kFewWorkers;
}

}  // namespace
}  // namespace fiber::detail
