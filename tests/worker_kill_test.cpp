// Worker processes SIGKILLed at random moments while 100 MB results are in flight: the job goes
// on, every item ends with its one correct result, and the lost worker is replaced (issue 15.1:
// UCX's shared-memory rendezvous once aborted the master when the sender died mid-transfer).
#include <gtest/gtest.h>
#include <signal.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "support/tasks.hpp"

namespace {

// 100 MB, a pattern of the seed that a receiver can check anywhere.
constexpr std::size_t kResultValues = std::size_t{100} * 1000 * 1000 / sizeof(std::uint64_t);
constexpr int kTrials = 10;
constexpr int kItemsPerTrial = 4;
// A kill lands somewhere in a round: the items' results take ~0.1-0.5 s to make and send here.
constexpr int kLatestKillMs = 600;
constexpr auto kWorkerTimeout = std::chrono::seconds(1);
// More than the 3 x worker_timeout within which a second loss counts as "soon after".
constexpr auto kLossesApart = 3 * kWorkerTimeout + std::chrono::milliseconds(200);

std::uint64_t pattern(std::uint64_t seed, std::size_t i) {
  return seed * 0x9E3779B97F4A7C15ULL + i;
}

}  // namespace

std::vector<std::uint64_t> large_result(std::uint64_t seed) {
  std::vector<std::uint64_t> values(kResultValues);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern(seed, i);
  return values;
}
FIBER_TASK(large_result);

namespace {

using namespace std::chrono_literals;

bool intact(const std::vector<std::uint64_t>& values, std::uint64_t seed) {
  if (values.size() != kResultValues) return false;
  for (std::size_t i = 0; i < values.size(); i += 4099) {
    if (values[i] != pattern(seed, i)) return false;
  }
  return values.back() == pattern(seed, values.size() - 1);
}

TEST(WorkerKill, KilledWhileSendingLargeResultsEveryRoundCompletes) {
  fiber::Pool pool({.processes = 2, .chunksize = 1, .worker_timeout = kWorkerTimeout});
  std::mt19937 random(20261201);
  std::uniform_int_distribution<int> delay_ms(0, kLatestKillMs);
  std::uint64_t seed = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<std::uint64_t> seeds;
    for (int i = 0; i < kItemsPerTrial; ++i) seeds.push_back(++seed);
    auto workers = pool.workers();
    ASSERT_FALSE(workers.empty());
    long victim = workers[random() % workers.size()].pid;
    auto pending = pool.map_async(large_result, seeds);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    kill(static_cast<pid_t>(victim), SIGKILL);
    auto results = pending.get();
    ASSERT_EQ(results.size(), seeds.size());
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      EXPECT_TRUE(intact(results[i], seeds[i])) << "trial " << trial << ", item " << i;
    }
    EXPECT_EQ(pool.size(), 2) << "trial " << trial;
    // Losses in quick succession make the pool wait longer before it gives a worker up (an
    // overloaded node looks the same); these are deliberate, so let each stand alone.
    std::this_thread::sleep_for(kLossesApart);
  }
  // A worker killed after its results were in is noticed once it has work again.
  std::vector<int> small(8);
  std::iota(small.begin(), small.end(), 0);
  EXPECT_EQ(pool.map(fiber_test::square, small, 1).size(), small.size());
  EXPECT_EQ(pool.stats().tasks_failed, 0u);
  EXPECT_GE(pool.stats().workers_lost, 1u);
}

}  // namespace
