// Tasks that crash, exit, hang or kill their worker: contained, retried, reported, and every item
// ends exactly once.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/tasks.hpp"

namespace {

// A file per item marks its first attempt, so a task can fail only then (the master and its
// workers share the file system).
bool first_attempt(const std::string& marker_dir, int item) {
  auto marker = std::filesystem::path(marker_dir) / std::to_string(item);
  if (std::filesystem::exists(marker)) return false;
  std::ofstream(marker) << "tried";
  return true;
}

}  // namespace

// Every 20th item crashes its first attempt, alternately by segfault and by SIGKILL. The segfault
// is a real one (a store to null), deliberate: exempt from UBSan (scripts/sanitize.sh).
__attribute__((no_sanitize("undefined"))) int crash_first_time(int item, std::string marker_dir) {
  if (item % 20 == 7 && first_attempt(marker_dir, item)) {
    if (item % 40 == 7) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;
    }
    raise(SIGKILL);
  }
  return item * 3;
}
FIBER_TASK(crash_first_time);

int segfault_on(int item, int bad) {
  if (item == bad) raise(SIGSEGV);
  return item;
}
FIBER_TASK(segfault_on);

int exit_or_abort(int how) {
  if (how == 1) std::exit(3);
  if (how == 2) std::abort();
  return how;
}
FIBER_TASK(exit_or_abort);

int hang_on(int item, int bad) {
  if (item == bad) std::this_thread::sleep_for(std::chrono::hours(1));
  return item;
}
FIBER_TASK(hang_on);

// Starts a process that would outlive it (it says its pid in a Queue), then hangs.
void start_a_child_then_hang(fiber::Queue<int> children) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  children.put(child);
  children.flush();
  pause();
}
FIBER_TASK(start_a_child_then_hang);

namespace {
// Neither gone nor a zombie (one killed whose new parent has not reaped it yet).
bool runs(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto after_name = line.rfind(") ");
  return after_name != std::string::npos && line.at(after_name + 2) != 'Z';
}
}  // namespace

// Kills its worker's MPI process (the task process's parent) on the first attempt of `item`.
int kill_worker_first_time(int item, int bad, std::string marker_dir) {
  if (item == bad && first_attempt(marker_dir, item)) kill(getppid(), SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return item;
}
FIBER_TASK(kill_worker_first_time);

long task_process_pid(int) { return static_cast<long>(getpid()); }
FIBER_TASK(task_process_pid);

namespace {

using namespace std::chrono_literals;

class Resilience : public ::testing::Test {
 protected:
  void SetUp() override {
    marker_dir_ = std::filesystem::temp_directory_path() /
                  ("fiber-resilience-" + std::to_string(getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(marker_dir_);
  }
  void TearDown() override { std::filesystem::remove_all(marker_dir_); }

  // 1,000 calls of crash_first_time, and what they return.
  std::vector<std::tuple<int, std::string>> crash_items() const {
    std::vector<std::tuple<int, std::string>> items;
    for (int i = 0; i < 1000; ++i) items.emplace_back(i, marker_dir_);
    return items;
  }
  static std::vector<int> crash_results() {
    std::vector<int> expected;
    for (int i = 0; i < 1000; ++i) expected.push_back(3 * i);
    return expected;
  }

  std::string marker_dir_;
};

TEST_F(Resilience, CrashingFirstAttemptsStillGiveExactResults) {
  fiber::Pool pool({.processes = 4});
  EXPECT_EQ(pool.map(crash_first_time, crash_items(), 1), crash_results());
  auto stats = pool.stats();
  EXPECT_EQ(stats.crashes, 50u);
  EXPECT_EQ(stats.tasks_retried, 50u);
  EXPECT_EQ(stats.tasks_completed, 1000u);
  EXPECT_EQ(stats.tasks_failed, 0u);
  EXPECT_EQ(pool.size(), 4);  // the workers survived
}

TEST_F(Resilience, CrashesInsideLargerChunksLoseNothingAndDuplicateNothing) {
  fiber::Pool pool({.processes = 3});
  auto items = crash_items();
  auto expected = crash_results();
  std::vector<int> streamed;
  // Chunks of 16: items after a crashed one in its chunk are sent again, items before it kept.
  for (int value : pool.imap_unordered(crash_first_time, items, 16)) streamed.push_back(value);
  std::sort(streamed.begin(), streamed.end());
  EXPECT_EQ(streamed, expected);
  EXPECT_EQ(pool.stats().crashes, 50u);
}

TEST_F(Resilience, AlwaysCrashingTaskIsWorkerLostAloneNamingTheSignal) {
  fiber::Pool pool({.processes = 2, .max_retries = 2});
  std::vector<std::tuple<int, int>> items;
  for (int i = 0; i < 1000; ++i) items.emplace_back(i, 500);
  auto stream = pool.imap(segfault_on, items);
  int good = 0;
  for (int i = 0; i < 1000; ++i) {
    if (i == 500) {
      try {
        stream.next();
        ADD_FAILURE() << "item 500 did not fail";
      } catch (const fiber::WorkerLost& error) {
        std::string what = error.what();
        EXPECT_NE(what.find("SIGSEGV"), std::string::npos) << what;
        EXPECT_NE(what.find("3 times"), std::string::npos) << what;
      }
      continue;
    }
    EXPECT_EQ(stream.next(), i);
    ++good;
  }
  EXPECT_EQ(good, 999);
  auto stats = pool.stats();
  EXPECT_EQ(stats.crashes, 3u);
  EXPECT_EQ(stats.tasks_retried, 2u);
  EXPECT_EQ(stats.tasks_failed, 1u);
  EXPECT_EQ(pool.apply(fiber_test::square, 9), 81);
}

TEST_F(Resilience, ExitAndAbortAreContained) {
  fiber::Pool pool({.processes = 1, .max_retries = 0});
  EXPECT_EQ(pool.apply(exit_or_abort, 0), 0);
  try {
    pool.apply(exit_or_abort, 1);
    ADD_FAILURE();
  } catch (const fiber::WorkerLost& error) {
    EXPECT_NE(std::string(error.what()).find("exited with status 3"), std::string::npos)
        << error.what();
  }
  try {
    pool.apply(exit_or_abort, 2);
    ADD_FAILURE();
  } catch (const fiber::WorkerLost& error) {
    EXPECT_NE(std::string(error.what()).find("SIGABRT"), std::string::npos) << error.what();
  }
  EXPECT_EQ(pool.apply(exit_or_abort, 5), 5);
}

TEST_F(Resilience, HungTaskTimesOut) {
  fiber::Pool pool({.processes = 2, .max_retries = 1});
  std::vector<std::tuple<int, int>> items;
  for (int i = 0; i < 20; ++i) items.emplace_back(i, 13);
  auto pending = pool.map_async(fiber::with_timeout(hang_on, 300ms), items, 1);
  try {
    pending.get();
    ADD_FAILURE() << "no timeout";
  } catch (const fiber::TimeoutError& error) {
    EXPECT_NE(std::string(error.what()).find("hang_on"), std::string::npos) << error.what();
  }
  EXPECT_EQ(pool.stats().timeouts, 2u);  // the first attempt and one retry
  // The per-pool timeout does the same.
  fiber::Pool strict({.processes = 1, .max_retries = 0, .task_timeout = 200ms});
  EXPECT_THROW(strict.apply(hang_on, 1, 1), fiber::TimeoutError);
  EXPECT_EQ(strict.apply(hang_on, 2, 1), 2);
}

// A task process that times out is killed with its process group: what its task started ends
// too, instead of living on without it.
TEST_F(Resilience, ATimedOutTaskEndsWithTheProcessesItStarted) {
  constexpr auto kTimeout = 300ms;
  constexpr auto kLongestEnd = 10s;
  fiber::Queue<int> children;
  fiber::Pool pool({.processes = 1, .max_retries = 0});
  EXPECT_THROW(pool.apply(fiber::with_timeout(start_a_child_then_hang, kTimeout), children),
               fiber::TimeoutError);
  pid_t child = children.get(kLongestEnd);
  auto deadline = std::chrono::steady_clock::now() + kLongestEnd;
  while (runs(child) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(runs(child)) << "the task's child " << child << " outlived the timeout";
  if (runs(child)) ::kill(child, SIGKILL);
}

TEST_F(Resilience, TimeoutNeedsIsolation) {
  EXPECT_THROW(
      fiber::Pool({.processes = 1, .isolation = fiber::Isolation::none, .task_timeout = 1s}),
      std::invalid_argument);
  fiber::Pool pool({.processes = 1, .isolation = fiber::Isolation::none});
  EXPECT_THROW(pool.apply(fiber::with_timeout(hang_on, 1s), 1, 2), std::invalid_argument);
}

TEST_F(Resilience, KilledWorkerProcessIsReplacedAndTheMapCompletes) {
  fiber::Pool pool({.processes = 3, .worker_timeout = 1500ms});
  auto before = pool.workers();
  std::vector<std::tuple<int, int, std::string>> items;
  std::vector<int> expected;
  for (int i = 0; i < 300; ++i) {
    items.emplace_back(i, 100, marker_dir_);
    expected.push_back(i);
  }
  EXPECT_EQ(pool.map(kill_worker_first_time, items, 1), expected);
  auto stats = pool.stats();
  EXPECT_EQ(stats.workers_lost, 1u);
  EXPECT_EQ(pool.size(), 3);  // capacity restored
  std::set<long> pids_before, pids_after;
  for (const auto& w : before) pids_before.insert(w.pid);
  for (const auto& w : pool.workers()) pids_after.insert(w.pid);
  EXPECT_NE(pids_before, pids_after);
}

// Workers that fall silent one after another (stopped here with SIGSTOP, with their task
// processes, as an overloaded node starves both in real life) are alive more likely than dead:
// fiber waits longer for the next before replacing it, instead of spawning a new process every
// worker_timeout.
TEST_F(Resilience, WorkersFallingSilentOneAfterAnotherAreWaitedForLonger) {
  using Clock = std::chrono::steady_clock;
  fiber::Pool pool({.processes = 1, .worker_timeout = 1000ms});
  std::vector<long> stopped, stopped_task_processes;
  std::vector<double> seconds_to_replace;
  for (int round = 0; round < 3; ++round) {
    long pid = pool.workers().at(0).pid;
    long task_pid = pool.apply(task_process_pid, 0);  // runs the next task too
    auto lost_before = pool.stats().workers_lost;
    auto pending = pool.apply_async(fiber_test::sleep_then, round, 50);
    kill(static_cast<pid_t>(task_pid), SIGSTOP);
    kill(static_cast<pid_t>(pid), SIGSTOP);
    stopped_task_processes.push_back(task_pid);
    stopped.push_back(pid);
    auto started = Clock::now();
    EXPECT_EQ(pending.get(), round);  // re-run on the replacement
    while (pool.stats().workers_lost == lost_before) std::this_thread::sleep_for(10ms);
    seconds_to_replace.push_back(std::chrono::duration<double>(Clock::now() - started).count());
  }
  EXPECT_EQ(pool.stats().workers_lost, 3u);
  EXPECT_EQ(pool.size(), 1);
  EXPECT_GT(seconds_to_replace[2], 1.5 * seconds_to_replace[0]);  // waited for longer

  // Woken up, they answer again: they are parked, and a pool that grows takes them back (parked
  // workers come before new ones) and runs tasks on them.
  for (long pid : stopped_task_processes) kill(static_cast<pid_t>(pid), SIGCONT);
  for (long pid : stopped) kill(static_cast<pid_t>(pid), SIGCONT);
  std::vector<std::tuple<int, int>> naps(20, {0, 50});  // the master listens meanwhile
  pool.map(fiber_test::sleep_then, naps, 1);
  pool.resize(8);
  std::set<long> pids;
  for (const auto& worker : pool.workers()) pids.insert(worker.pid);
  for (long pid : stopped) EXPECT_TRUE(pids.count(pid)) << "worker pid " << pid << " not reused";
  std::vector<int> items(200), squares(200);
  for (int i = 0; i < 200; ++i) items[i] = i, squares[i] = i * i;
  EXPECT_EQ(pool.map(fiber_test::square, items, 1), squares);
}

// Through a lane the master reaches the task process itself: a worker stopped (SIGSTOP) while
// its task process runs costs nothing, its tasks are answered and it is not taken for lost.
// Through the workers (FIBER_LANES=0) it is, after worker_timeout, and its tasks run elsewhere.
TEST_F(Resilience, AStoppedWorkerStopsItsTasksOnlyWithoutALane) {
  fiber::Pool pool({.processes = 1, .worker_timeout = 1000ms});
  EXPECT_EQ(pool.apply(fiber_test::square, 3), 9);  // (a lane is open now, if lanes are on)
  const long pid = pool.workers().at(0).pid;
  ASSERT_EQ(kill(static_cast<pid_t>(pid), SIGSTOP), 0);
  std::vector<int> items{1, 2, 3, 4}, squares{1, 4, 9, 16};
  EXPECT_EQ(pool.map(fiber_test::square, items, 1), squares);
  const char* lanes = std::getenv("FIBER_LANES");
  const bool lanes_on = !lanes || std::string(lanes) != "0";
  EXPECT_EQ(pool.stats().workers_lost, lanes_on ? 0u : 1u);
  kill(static_cast<pid_t>(pid), SIGCONT);
}

TEST_F(Resilience, TasksRunInTheirOwnProcessUnlessIsolationIsNone) {
  fiber::Pool isolated({.processes = 1});
  EXPECT_NE(isolated.apply(task_process_pid, 0), isolated.workers().at(0).pid);
  isolated.terminate();
  fiber::Pool inline_pool({.processes = 1, .isolation = fiber::Isolation::none});
  EXPECT_EQ(inline_pool.apply(task_process_pid, 0), inline_pool.workers().at(0).pid);
}

}  // namespace
