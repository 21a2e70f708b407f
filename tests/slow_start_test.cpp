// Workers whose start takes longer than the pool's worker_timeout (a loaded node, docs/design.md,
// "Failures") are not taken for lost for it: a worker's silence starts when the master has it,
// not when the command that spawned it began. (Every process of this test sleeps at
// start-up for FIBER_TEST_SLOW_START_MS, the workers before their MPI_Init: the spawn lasts that
// long.)
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

const bool slept_at_start = [] {
  if (const char* delay = std::getenv("FIBER_TEST_SLOW_START_MS")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(delay)));
  }
  return true;
}();

}  // namespace

void ready_worker(int) {}
FIBER_TASK(ready_worker);

int twice(int x) { return 2 * x; }
FIBER_TASK(twice);

namespace {

TEST(SlowStart, WorkersThatTookLongerThanTheTimeoutToStartAreNotLost) {
  ASSERT_TRUE(slept_at_start);
  ASSERT_NE(std::getenv("FIBER_TEST_SLOW_START_MS"), nullptr) << "run through CTest";
  fiber::Pool pool({.processes = 3,
                    .initializer = fiber::call(ready_worker, 0),
                    .worker_timeout = std::chrono::milliseconds(500)});
  std::vector<int> items(30);
  std::iota(items.begin(), items.end(), 0);
  auto doubled = pool.map(twice, items);
  EXPECT_EQ(doubled[29], 58);
  EXPECT_EQ(pool.stats().workers_lost, 0u);
  pool.resize(5);  // a growth, after the start, takes as long
  EXPECT_EQ(pool.map(twice, items), doubled);
  EXPECT_EQ(pool.stats().workers_lost, 0u);
  EXPECT_EQ(pool.size(), 5);
}

}  // namespace
