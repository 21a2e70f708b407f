// Idle workers sleep (docs/design.md, "Idle workers sleep"): a worker that a pool holds with
// nothing to do, or a parked one, is woken by the master's doorbell, not by a poll of its own.
// So does, nearly, one whose task runs long. What is counted is its wake-ups, from /proc (the
// context switches of its threads), over a few seconds: a count, not a time, so a loaded machine
// does not fail it (a sleeper there switches no more often; a poller every 1 ms, as before,
// switched ~1,000 times a second). Run with lanes (the workers on the master's host lend it their
// task processes) and without (FIBER_LANES=0: as on every other host).
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/process_stats.hpp"
#include "support/tasks.hpp"

namespace {

using fiber_test::square;
using namespace std::chrono_literals;

// Past a worker's spin after its last message (Supervisor::kSpinBeforeSleep) and its first short
// naps.
constexpr auto kSettle = 1500ms;
constexpr auto kCounted = 3s;
// A look at MPI costs up to 3 switches: the sleep, and a yield in each of the two MPI tests that
// find nothing (yield_when_idle; under load a yield switches). A held or parked worker's naps
// grow to 2 s: ~5 looks in these 3 s, 2-10 switches seen; allowed 48. Its other threads (UCX's,
// PMIx's, Open MPI's) sleep in epoll and were not seen to wake: allowed as many again.
constexpr long kMaxOwnWakeups = 48;
constexpr long kMaxAllWakeups = 96;
// A worker whose task runs naps until its task process answers, the master rings or a heartbeat
// is due (1.25 s here): 2-4 switches seen in these 3 s, allowed as a held one's. Lent to the
// master (a lane), it looks every 100 ms (with its heartbeats): ~30 looks, 25-90 switches seen;
// allowed 240. It used to look every 200 us: ~15,000 looks.
constexpr long kMaxLentRunningWakeups = 240;
constexpr int kTaskMilliseconds = 6000;

std::vector<int> iota(int count) {
  std::vector<int> values(count);
  for (int i = 0; i < count; ++i) values[i] = i;
  return values;
}

std::vector<int> squares(int count) {
  std::vector<int> values(count);
  for (int i = 0; i < count; ++i) values[i] = i * i;
  return values;
}

struct Wakeups {
  long own = 0;  // the worker's main thread (its loop)
  long all = 0;  // every thread of the process
};

Wakeups wakeups_of(long pid) {
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  Wakeups counted;
  counted.own = fiber_test::thread_switches(tasks / std::to_string(pid) / "status");
  counted.all = fiber_test::wakeups_of_threads(pid);
  return counted;
}

// Counts the workers' wake-ups over kCounted, once they are settled, and checks them.
void expect_asleep(const std::vector<long>& pids, const char* what, long max_own = kMaxOwnWakeups,
                   long max_all = kMaxAllWakeups) {
  std::this_thread::sleep_for(kSettle);
  std::vector<Wakeups> before;
  for (long pid : pids) before.push_back(wakeups_of(pid));
  std::this_thread::sleep_for(kCounted);
  for (std::size_t i = 0; i < pids.size(); ++i) {
    Wakeups after = wakeups_of(pids[i]);
    long own = after.own - before[i].own;
    long all = after.all - before[i].all;
    std::cout << what << " worker " << pids[i] << ": " << own << " wake-ups of its loop, " << all
              << " of all its threads in " << std::chrono::seconds(kCounted).count() << " s\n";
    EXPECT_LE(own, max_own) << what << " worker " << pids[i] << " keeps waking up";
    EXPECT_LE(all, max_all) << what << " worker " << pids[i] << "'s threads keep waking up";
  }
}

std::vector<long> pids_of(const fiber::Pool& pool) {
  std::vector<long> pids;
  for (const auto& worker : pool.workers()) pids.push_back(worker.pid);
  return pids;
}

TEST(IdleWorkers, AHeldWorkerSleepsAndTheMasterWakesIt) {
  fiber::Pool pool({.processes = 2});
  EXPECT_EQ(pool.map(square, iota(100)), squares(100));
  expect_asleep(pids_of(pool), "held");
  // Asleep, they still take the next call (the doorbell rang), and again after another sleep.
  EXPECT_EQ(pool.map(square, iota(100)), squares(100));
  expect_asleep(pids_of(pool), "held");
  EXPECT_EQ(pool.map(square, iota(10)), squares(10));
}

// Its task process runs a long task (a sleep): the worker only waits for it.
TEST(IdleWorkers, AWorkerWhoseTaskRunsWakesRarely) {
  fiber::Pool pool({.processes = 2});
  EXPECT_EQ(pool.map(square, iota(10)), squares(10));
  auto running = pool.map_async(
      fiber_test::sleep_then,
      std::vector<std::tuple<int, int>>{{0, kTaskMilliseconds}, {1, kTaskMilliseconds}}, 1);
  const char* lanes = std::getenv("FIBER_LANES");
  if (lanes != nullptr && std::string(lanes) == "0") {
    expect_asleep(pids_of(pool), "running");
  } else {
    expect_asleep(pids_of(pool), "running", kMaxLentRunningWakeups, kMaxLentRunningWakeups);
  }
  EXPECT_EQ(running.get(), iota(2));
}

TEST(IdleWorkers, AParkedWorkerSleepsAndComesBack) {
  std::vector<long> pids;
  {
    fiber::Pool pool({.processes = 2});
    EXPECT_EQ(pool.map(square, iota(100)), squares(100));
    pids = pids_of(pool);
  }
  expect_asleep(pids, "parked");
  fiber::Pool pool({.processes = 2});
  EXPECT_EQ(pool.map(square, iota(100)), squares(100));
}

}  // namespace
