// Workers belong to the runtime: pools borrow and return them, initializers run per worker.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/tasks.hpp"

namespace {
int offset = 0;  // set by the initializer, in each worker
}

void set_offset(int value) { offset = value; }
FIBER_TASK(set_offset);

int plus_offset(int x) { return x + offset; }
FIBER_TASK(plus_offset);

namespace {

using fiber_test::square;

TEST(Lifecycle, FiftyPoolsInARowReuseTheSameWorkers) {
  std::set<long> pids;
  for (int round = 0; round < 50; ++round) {
    fiber::Pool pool({.processes = 1 + round % 3});
    EXPECT_EQ(pool.size(), 1 + round % 3);
    auto results = pool.map(square, std::vector<int>{1, 2, 3, 4});
    ASSERT_EQ(results, (std::vector<int>{1, 4, 9, 16})) << "round " << round;
    for (const auto& worker : pool.workers()) pids.insert(worker.pid);
  }
  EXPECT_EQ(pids.size(), 3u);  // never more worker processes than the largest pool
}

TEST(Lifecycle, TwoPoolsAtOnceHaveDistinctWorkers) {
  fiber::Pool first({.processes = 2});
  fiber::Pool second({.processes = 2});
  std::set<long> first_pids, second_pids;
  for (const auto& worker : first.workers()) first_pids.insert(worker.pid);
  for (const auto& worker : second.workers()) second_pids.insert(worker.pid);
  EXPECT_EQ(first_pids.size(), 2u);
  EXPECT_EQ(second_pids.size(), 2u);
  for (long pid : first_pids) EXPECT_EQ(second_pids.count(pid), 0u);
  auto a = first.map_async(square, std::vector<int>(1000, 3));
  auto b = second.map_async(square, std::vector<int>(1000, 4));
  EXPECT_EQ(a.get(), std::vector<int>(1000, 9));
  EXPECT_EQ(b.get(), std::vector<int>(1000, 16));
}

TEST(Lifecycle, InitializerRunsOnEveryWorkerBeforeTasks) {
  {
    fiber::Pool pool({.processes = 2, .initializer = fiber::call(set_offset, 1000)});
    auto results = pool.map(plus_offset, std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}, 1);
    EXPECT_EQ(results, (std::vector<int>{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}));
  }
  // The next pool reuses the workers and runs its own initializer.
  fiber::Pool pool({.processes = 2, .initializer = fiber::call(set_offset, -5)});
  EXPECT_EQ(pool.map(plus_offset, std::vector<int>{10, 20, 30}, 1), (std::vector<int>{5, 15, 25}));
}

namespace {
int generation = -1;  // set by broadcast, in each worker's task process
}

void set_generation(int value) { generation = value; }
FIBER_TASK(set_generation);

// The generation the task process sees; crashes on request (to replace its task process).
int read_generation(bool crash) {
  if (crash) std::abort();
  return generation;
}
FIBER_TASK(read_generation);

TEST(Lifecycle, BroadcastReachesEveryWorkerNewcomersAndReplacedTaskProcesses) {
  fiber::Pool pool({.processes = 2, .initializer = fiber::call(set_offset, 1)});
  pool.broadcast(set_generation, 7);
  EXPECT_EQ(pool.map(read_generation, std::vector<bool>(20, false), 1), std::vector<int>(20, 7));
  pool.broadcast(set_generation, 8);  // replaces 7
  pool.resize(4);                     // newcomers get the initializer, then generation 8
  EXPECT_EQ(pool.map(read_generation, std::vector<bool>(40, false), 1), std::vector<int>(40, 8));
  std::vector<bool> one_crash(10, false);
  one_crash[0] = true;
  auto pending = pool.map_async(read_generation, one_crash, 1);
  try {
    pending.get();
  } catch (const fiber::WorkerLost&) {  // the crashing item fails after its retries
  }
  EXPECT_EQ(pool.stats().crashes, 3u);
  // Replaced task processes replay the initializer and the broadcast.
  EXPECT_EQ(pool.map(read_generation, std::vector<bool>(40, false), 1), std::vector<int>(40, 8));
  EXPECT_EQ(pool.map(plus_offset, std::vector<int>{1, 2}, 1), (std::vector<int>{2, 3}));
}

int fail_initializer(int) { throw std::runtime_error("no simulator licence"); }
FIBER_TASK(fail_initializer);

TEST(Lifecycle, FailingInitializerFailsThePoolConstruction) {
  try {
    fiber::Pool pool({.processes = 1, .initializer = fiber::call(fail_initializer, 0)});
    ADD_FAILURE() << "the pool started despite its initializer";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.message(), "no simulator licence");
  }
  fiber::Pool pool({.processes = 1});  // its worker is free again
  EXPECT_EQ(pool.apply(square, 3), 9);
}

// Fails on every worker, some later than others (by worker id, rising or falling): the first
// failure that the pool looks at arrives while other initializers still run, whichever order it
// looks in.
void fail_initializer_staggered(int step_ms, bool rising) {
  int rank = fiber::this_worker().id % 3;
  std::this_thread::sleep_for(std::chrono::milliseconds(step_ms * (rising ? rank : 2 - rank)));
  throw std::runtime_error("no simulator licence");
}
FIBER_TASK(fail_initializer_staggered);

constexpr int kStaggerMs = 500;

int runtime_workers() {
  fiber::Pool probe({.processes = 1});
  auto stats = probe.stats();
  return stats.workers + stats.parked_workers;
}

TEST(Lifecycle, FailingInitializerGivesEveryWorkerBackBeforeItThrows) {
  { fiber::Pool warm({.processes = 3}); }
  int before = runtime_workers();
  for (bool rising : {true, false}) {
    EXPECT_THROW(
        fiber::Pool({.processes = 3,
                     .initializer = fiber::call(fail_initializer_staggered, kStaggerMs, rising)}),
        fiber::TaskError);
    // Retried at once: the three workers are parked again, none is spawned (counted once every
    // initializer is over: a worker still running one is neither in a pool nor parked).
    fiber::Pool retried({.processes = 3});
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * kStaggerMs));
    auto stats = retried.stats();
    EXPECT_EQ(stats.workers + stats.parked_workers, before)
        << stats.workers << " in the pool, " << stats.parked_workers << " parked";
  }
}

// An initializer that runs ahead (it only sets its process's own state; this one notes its run
// in `folder`, named by its process, for the test to count).
void note_run(const std::string& folder) {
  std::ofstream(std::filesystem::path(folder) / std::to_string(getpid()));
}
FIBER_TASK(note_run);

long task_process(int) { return getpid(); }
FIBER_TASK(task_process);

namespace {

std::set<long> runs_noted(const std::filesystem::path& folder) {
  std::set<long> pids;
  for (const auto& file : std::filesystem::directory_iterator(folder)) {
    pids.insert(std::stol(file.path().filename().string()));
  }
  return pids;
}

// How long the test waits for parked workers' standbys to run the initializer ahead (it polls:
// about 10 ms after the park on an idle machine), and then for their word to reach the master.
constexpr auto kStandbyLimit = std::chrono::seconds(60);
constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr auto kWordOfTheStandbys = std::chrono::milliseconds(300);

std::set<long> pids_of(const std::vector<long>& pids) { return {pids.begin(), pids.end()}; }

}  // namespace

TEST(Lifecycle, AnInitializerThatRunsAheadIsTakenByParkedWorkersStandbysAndNotSentAgain) {
  std::string pattern = (std::filesystem::temp_directory_path() / "fiber-ahead.XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path folder(pattern);
  const fiber::PoolOptions options{.processes = 2,
                                   .initializer = fiber::call(note_run, folder.string()),
                                   .initializer_runs_ahead = true};
  std::set<long> first;
  {
    fiber::Pool pool(options);
    EXPECT_EQ(pool.stats().tasks_completed, 2u);  // sent to each worker, and waited for
    first = pids_of(pool.map(task_process, std::vector<int>(20, 0), 1));
  }
  EXPECT_EQ(runs_noted(folder), first);
  // Parked, each worker runs it again in its standby, unasked.
  const auto deadline = std::chrono::steady_clock::now() + kStandbyLimit;
  while (runs_noted(folder).size() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPoll);
  }
  ASSERT_EQ(runs_noted(folder).size(), 4u);
  std::this_thread::sleep_for(kWordOfTheStandbys);
  std::set<long> ahead;
  for (long pid : runs_noted(folder)) {
    if (!first.count(pid)) ahead.insert(pid);
  }
  {
    fiber::Pool pool(options);  // the same initializer: not sent, nothing waited for
    EXPECT_EQ(pool.stats().tasks_completed, 0u);
    EXPECT_EQ(pids_of(pool.map(task_process, std::vector<int>(20, 0), 1)), ahead);
    EXPECT_EQ(runs_noted(folder).size(), 4u);  // (parked again, they will run it once more)
  }
  // Another initializer (its argument differs): sent, to task processes forked anew.
  std::this_thread::sleep_for(kWordOfTheStandbys);
  const std::filesystem::path other = folder / "other";
  std::filesystem::create_directory(other);
  {
    fiber::Pool pool({.processes = 2,
                      .initializer = fiber::call(note_run, other.string()),
                      .initializer_runs_ahead = true});
    EXPECT_EQ(pool.stats().tasks_completed, 2u);
    auto pids = pids_of(pool.map(task_process, std::vector<int>(20, 0), 1));
    EXPECT_EQ(pids, runs_noted(other));
    for (long pid : pids) EXPECT_EQ(ahead.count(pid), 0u);
  }
  std::filesystem::remove_all(folder);
}

TEST(Lifecycle, MasterKnowsItIsNotAWorker) {
  EXPECT_EQ(fiber::this_worker().id, -1);
  fiber::Pool pool({.processes = 1});
  EXPECT_GE(pool.workers().at(0).id, 0);
}

}  // namespace
