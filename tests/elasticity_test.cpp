// Pools that grow and shrink while they work: nothing lost, parked workers idle, autoscaling.
#include <gtest/gtest.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/process_stats.hpp"
#include "support/tasks.hpp"

// The pid of the worker that runs it (not of its task process).
long running_worker_pid(int /*ignored*/) { return fiber::this_worker().pid; }
FIBER_TASK(running_worker_pid);

namespace {

using fiber_test::sleep_then;
using fiber_test::square;
using namespace std::chrono_literals;

std::vector<std::tuple<int, int>> sleeps(int count, int milliseconds) {
  std::vector<std::tuple<int, int>> items;
  for (int i = 0; i < count; ++i) items.emplace_back(i, milliseconds);
  return items;
}

std::vector<int> iota(int count) {
  std::vector<int> values(count);
  for (int i = 0; i < count; ++i) values[i] = i;
  return values;
}

// CPU seconds (user + system) a process has used, from /proc.
double cpu_seconds(long pid) {
  return static_cast<double>(fiber_test::cpu_ticks(pid)) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

TEST(Elasticity, TwoHundredResizesWithWorkInFlight) {
  fiber::Pool pool({.processes = 1});
  std::mt19937 random(7);
  std::uniform_int_distribution<int> size(1, 8);
  std::vector<fiber::AsyncResult<std::vector<int>>> pending;
  for (int cycle = 0; cycle < 200; ++cycle) {
    pending.push_back(pool.map_async(sleep_then, sleeps(6, 1), 1));
    int n = size(random);
    pool.resize(n);
    ASSERT_EQ(pool.size(), n);
    if (pending.size() > 4) {
      ASSERT_EQ(pending.front().get(), iota(6)) << "cycle " << cycle;
      pending.erase(pending.begin());
    }
  }
  for (auto& result : pending) EXPECT_EQ(result.get(), iota(6));
  EXPECT_EQ(pool.stats().tasks_completed, 1200u);
  EXPECT_EQ(pool.stats().tasks_failed, 0u);
}

TEST(Elasticity, ResizeDuringImapUnordered) {
  fiber::Pool pool({.processes = 2});
  auto stream = pool.imap_unordered(sleep_then, sleeps(400, 3), 1);
  std::vector<int> seen;
  for (int value : stream) {
    seen.push_back(value);
    if (seen.size() == 50) pool.resize(6);
    if (seen.size() == 200) pool.resize(1);
    if (seen.size() == 300) pool.resize(3);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota(400));
  EXPECT_EQ(pool.size(), 3);
}

TEST(Elasticity, GrowingUnparksBeforeSpawning) {
  int before = 0;
  std::vector<long> parked_pids;
  {
    fiber::Pool first({.processes = 3});
    for (const auto& worker : first.workers()) parked_pids.push_back(worker.pid);
  }
  fiber::Pool pool({.processes = 1});
  before = pool.stats().parked_workers;
  EXPECT_GE(before, 2);
  pool.resize(3);
  EXPECT_EQ(pool.stats().parked_workers, before - 2);
  for (const auto& worker : pool.workers()) {
    EXPECT_NE(std::find(parked_pids.begin(), parked_pids.end(), worker.pid), parked_pids.end())
        << "worker " << worker.pid << " was spawned although parked ones were free";
  }
}

TEST(Elasticity, ParkedWorkersUseUnderOnePercentCpu) {
  std::vector<long> pids;
  {
    fiber::Pool pool({.processes = 4});
    EXPECT_EQ(pool.map(square, iota(1000)).size(), 1000u);
    for (const auto& worker : pool.workers()) pids.push_back(worker.pid);
  }
  std::this_thread::sleep_for(500ms);  // past the spinning right after the last message
  std::vector<double> start;
  for (long pid : pids) start.push_back(cpu_seconds(pid));
  auto measured = 5s;
  std::this_thread::sleep_for(measured);
  for (std::size_t i = 0; i < pids.size(); ++i) {
    double share =
        (cpu_seconds(pids[i]) - start[i]) / std::chrono::duration<double>(measured).count();
    EXPECT_LT(share, 0.01) << "parked worker " << pids[i] << " used " << share * 100 << " % CPU";
  }
}

// Shrinking while every worker has work in flight: the pool has one worker at once, the five
// that leave finish what they hold and park, every item ends once (none retried, none failed),
// and what the pool runs afterwards runs on the one it kept.
TEST(Elasticity, ShrinkingLosesNothing) {
  constexpr int kItems = 120;
  constexpr int kBefore = 6, kAfter = 1;
  fiber::Pool pool({.processes = kBefore});
  const int parked_before = pool.stats().parked_workers;
  auto pending = pool.map_async(sleep_then, sleeps(kItems, 5), 1);
  std::this_thread::sleep_for(20ms);
  pool.resize(kAfter);
  EXPECT_EQ(pool.size(), kAfter);
  ASSERT_EQ(pool.workers().size(), static_cast<std::size_t>(kAfter));
  const long kept = pool.workers().front().pid;
  EXPECT_EQ(pending.get(), iota(kItems));
  auto stats = pool.stats();
  EXPECT_EQ(stats.workers, kAfter);
  EXPECT_EQ(stats.tasks_completed, static_cast<std::uint64_t>(kItems));
  EXPECT_EQ(stats.tasks_retried, 0u);
  EXPECT_EQ(stats.tasks_failed, 0u);
  // A worker that left parks once its last chunk is answered, which get() may see first.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.stats().parked_workers < parked_before + kBefore - kAfter &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(pool.stats().parked_workers, parked_before + kBefore - kAfter);
  for (long pid : pool.map(running_worker_pid, std::vector<int>(20), 1)) EXPECT_EQ(pid, kept);
}

TEST(Elasticity, AutoscalingFollowsTheBacklog) {
  fiber::Pool pool({.processes = 1, .min_workers = 1, .max_workers = 4, .scale_down_after = 300ms});
  auto pending = pool.map_async(sleep_then, sleeps(200, 5), 1);
  int largest = 0;
  while (!pending.ready()) {
    largest = std::max(largest, pool.size());
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(pending.get(), iota(200));
  EXPECT_EQ(largest, 4);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.size() > 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(pool.size(), 1);  // scaled down after the idle period
}

}  // namespace
