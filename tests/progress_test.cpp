// Work goes on while the master computes: the dispatcher does not need the caller in a pool call.
// And while callers wait, their own threads make the progress (the dispatcher thread steps
// aside): work they leave in flight when they go back to computing still completes, and several
// threads waiting at once each get their own results. While nothing comes from the workers,
// neither the waiting caller nor the dispatcher thread spins: the master's CPU time stays a
// small part of a long task's; nor does a worker whose task process the master feeds itself.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/tasks.hpp"

namespace {

using fiber_test::sleep_then;
using namespace std::chrono_literals;

// Keeps the calling thread busy (no pool calls) for `duration`.
double compute_for(std::chrono::steady_clock::duration duration) {
  double sum = 0;
  auto until = std::chrono::steady_clock::now() + duration;
  for (long i = 1; std::chrono::steady_clock::now() < until; ++i) sum += std::sqrt(double(i));
  return sum;
}

// This process's CPU time (all its threads) so far.
std::chrono::duration<double> cpu_time() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return std::chrono::duration<double>(seconds(usage.ru_utime) + seconds(usage.ru_stime));
}

// A quiet master polls its workers with the backoff's sleeps (a few % of a core at most); one
// that spun would use about all of its core for the task's whole time.
constexpr int kLongTaskMs = 2000;
constexpr double kMostQuietCpuShare = 0.2;

TEST(Progress, TheMasterDoesNotSpinWhileATaskRuns) {
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(sleep_then, 0, 0), 0);  // started, and its worker joined
  const std::chrono::duration<double> task = std::chrono::milliseconds(kLongTaskMs);
  auto before = cpu_time();
  EXPECT_EQ(pool.apply(sleep_then, 1, kLongTaskMs), 1);  // this thread drives the progress
  EXPECT_LT(cpu_time() - before, kMostQuietCpuShare * task);
  before = cpu_time();
  auto running = pool.apply_async(sleep_then, 2, kLongTaskMs);
  std::this_thread::sleep_for(task);  // the dispatcher thread polls alone
  EXPECT_EQ(running.get(), 2);
  EXPECT_LT(cpu_time() - before, kMostQuietCpuShare * task);
}

// How often process `pid`'s main thread was switched out so far (/proc/<pid>/status), or -1.
long context_switches(long pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  long switches = 0;
  int found = 0;
  for (std::string field; status >> field;) {
    if (field == "voluntary_ctxt_switches:" || field == "nonvoluntary_ctxt_switches:") {
      long count = 0;
      status >> count;
      switches += count;
      ++found;
    }
  }
  return found == 2 ? switches : -1;
}

// A worker on the master's host lends its task process to the master (docs/design.md, "The
// lane") and sleeps until the master rings it, looking at MPI only now and then: under one switch
// per 20 ms of the task. A worker that looked every millisecond would be switched out about once
// per millisecond, on the core its task process needs.
constexpr long kMostLentWorkerSwitches = kLongTaskMs / 20;

TEST(Progress, ALentWorkerSleepsWhileItsTaskRuns) {
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(sleep_then, 0, 0), 0);  // its task process is lent from now on
  const long worker = pool.workers().at(0).pid;
  const long before = context_switches(worker);
  ASSERT_GE(before, 0) << "no /proc/" << worker << "/status";
  EXPECT_EQ(pool.apply(sleep_then, 1, kLongTaskMs), 1);
  EXPECT_LT(context_switches(worker) - before, kMostLentWorkerSwitches);
}

TEST(Progress, ApplyAsyncCompletesWhileTheMasterComputes) {
  fiber::Pool pool({.processes = 1});
  // Four tasks in sequence on one worker: they can only all finish if the dispatcher keeps
  // sending while this thread computes.
  std::vector<fiber::AsyncResult<int>> pending;
  for (int i = 0; i < 4; ++i) pending.push_back(pool.apply_async(sleep_then, i, 150));
  EXPECT_GT(compute_for(3s), 0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(pending[i].ready()) << "task " << i << " did not progress";
    EXPECT_EQ(pending[i].get(), i);
  }
}

TEST(Progress, WorkLeftInFlightByAWaiterCompletesWhileTheMasterComputes) {
  fiber::Pool pool({.processes = 1});
  std::vector<fiber::AsyncResult<int>> pending;
  for (int i = 0; i < 4; ++i) pending.push_back(pool.apply_async(sleep_then, i, 150));
  EXPECT_EQ(pending[0].get(), 0);  // this thread drives progress until the first is back
  EXPECT_GT(compute_for(2s), 0);
  for (int i = 1; i < 4; ++i) {
    EXPECT_TRUE(pending[i].ready()) << "task " << i << " did not progress";
    EXPECT_EQ(pending[i].get(), i);
  }
}

TEST(Progress, SeveralThreadsWaitingAtOnceEachGetTheirResults) {
  fiber::Pool pool({.processes = 2});
  constexpr int kThreads = 4, kCalls = 200;
  std::vector<int> wrong(kThreads, 0);
  {
    std::vector<std::jthread> callers;
    for (int t = 0; t < kThreads; ++t) {
      callers.emplace_back([&, t] {
        for (int i = 0; i < kCalls; ++i) {
          int value = t * kCalls + i;
          if (pool.apply_async(sleep_then, value, 0).get() != value) ++wrong[t];
        }
      });
    }
  }
  EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
}

TEST(Progress, MapAsyncCompletesWhileTheMasterComputes) {
  fiber::Pool pool({.processes = 2});
  auto pending = pool.map_async(sleep_then, std::vector<std::tuple<int, int>>(10, {1, 50}), 1);
  compute_for(3s);
  EXPECT_TRUE(pending.ready());
  EXPECT_EQ(pending.get(), std::vector<int>(10, 1));
}

}  // namespace
