// fiber::Process, as Python's multiprocessing.Process: start, join, join(timeout), is_alive,
// exitcode (0 returned, 1 raised, -11 segfaulted, N exit(N), -15 terminated, -9 its worker
// lost), terminate; the runtime's workers go on after a crash, also one that kills its own
// process group.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "support/tasks.hpp"

namespace {

using namespace std::chrono_literals;

void returns(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}
void raises() { throw std::runtime_error("raised in the process"); }
void segfaults() { raise(SIGSEGV); }
void exits(int status) { std::exit(status); }
void put_worker_pid(fiber::Queue<long> pids) { pids.put(fiber::this_worker().pid); }
void kills_its_group() { ::kill(0, SIGKILL); }
// Ends only with its worker (its parent-death signal): returning first would let its result reach
// the master through a lane.
void kills_its_worker() {
  ::kill(getppid(), SIGKILL);
  pause();
}

// Longer than a crash takes to be reported, shorter than a worker's loss takes to be noticed
// (its silence: worker_timeout, 10 s, or more after other losses).
constexpr auto kCrashReported = 8s;
// Longer than a lost worker takes to be noticed: worker_timeout, doubled by the losses before.
constexpr auto kWorkerLossNoticed = 90s;

}  // namespace

FIBER_TASK(returns);
FIBER_TASK(raises);
FIBER_TASK(segfaults);
FIBER_TASK(exits);
FIBER_TASK(put_worker_pid);
FIBER_TASK(kills_its_group);
FIBER_TASK(kills_its_worker);

namespace {

TEST(Process, ExitcodeIsEmptyUntilItEndsThenZero) {
  fiber::Process process(returns, 300);
  EXPECT_FALSE(process.is_alive());
  EXPECT_FALSE(process.exitcode().has_value());
  process.start();
  EXPECT_TRUE(process.is_alive());
  EXPECT_FALSE(process.exitcode().has_value());
  process.join();
  EXPECT_FALSE(process.is_alive());
  EXPECT_EQ(process.exitcode(), 0);
}

TEST(Process, AnExceptionIsExitcodeOne) {
  fiber::Process process(raises);
  process.start();
  process.join();
  EXPECT_EQ(process.exitcode(), 1);
}

TEST(Process, ASegfaultIsExitcodeMinusEleven) {
  fiber::Process process(segfaults);
  process.start();
  process.join();
  EXPECT_EQ(process.exitcode(), -SIGSEGV);
  fiber::Process after(returns, 0);  // the runtime's workers go on
  after.start();
  after.join();
  EXPECT_EQ(after.exitcode(), 0);
}

TEST(Process, ExitIsItsStatus) {
  fiber::Process process(exits, 3);
  process.start();
  process.join();
  EXPECT_EQ(process.exitcode(), 3);
}

TEST(Process, JoinWithATimeoutOnALongTaskReturnsAndItGoesOn) {
  fiber::Process process(returns, 60'000);
  process.start();
  EXPECT_FALSE(process.join(200ms));
  EXPECT_TRUE(process.is_alive());
  EXPECT_FALSE(process.exitcode().has_value());
  process.terminate();
  EXPECT_FALSE(process.is_alive());
  EXPECT_EQ(process.exitcode(), -SIGTERM);
  EXPECT_TRUE(process.join(0ms));
}

TEST(Process, StartsOnlyOnce) {
  fiber::Process process(returns, 0);
  EXPECT_THROW(process.join(), std::logic_error);
  process.start();
  EXPECT_THROW(process.start(), std::logic_error);
  process.join();
  EXPECT_THROW(process.start(), std::logic_error);
}

// Its worker is parked once it has ended and been joined: the next Process runs on it, unspawned.
TEST(Process, TheNextProcessReusesTheParkedWorker) {
  fiber::Queue<long> pids;
  fiber::Process first(put_worker_pid, pids);
  first.start();
  first.join();
  fiber::Process second(put_worker_pid, pids);
  second.start();
  second.join();
  EXPECT_EQ(pids.get(5s), pids.get(5s));
}

// The second starts while the first still runs (long enough to outlast a worker's spawn): both
// are alive at once.
TEST(Process, SeveralRunAtOnce) {
  constexpr int kRunMs = 1000;
  fiber::Process first(returns, kRunMs), second(returns, kRunMs);
  first.start();
  second.start();
  EXPECT_TRUE(first.is_alive());
  EXPECT_TRUE(second.is_alive());
  first.join();
  second.join();
  EXPECT_EQ(first.exitcode(), 0);
  EXPECT_EQ(second.exitcode(), 0);
}

// The task process has a process group of its own: kill(0, SIGKILL) ends it alone, a crash its
// worker reports at once, instead of the worker too, noticed only by its silence.
TEST(Process, ATaskThatKillsItsProcessGroupEndsOnlyItsProcess) {
  fiber::Process process(kills_its_group);
  process.start();
  ASSERT_TRUE(process.join(kCrashReported))
      << "the crash was not reported within " << kCrashReported.count() << " s";
  EXPECT_EQ(process.exitcode(), -SIGKILL);
  fiber::Process after(returns, 0);
  after.start();
  after.join();
  EXPECT_EQ(after.exitcode(), 0);
}

// Its worker is lost (here SIGKILLed by the task): the task process was killed with it (its
// parent-death signal), and the exitcode says so, not 1 ("it threw").
TEST(Process, AProcessWhoseWorkerWasLostIsExitcodeMinusNine) {
  fiber::Process process(kills_its_worker);
  process.start();
  ASSERT_TRUE(process.join(kWorkerLossNoticed));
  EXPECT_EQ(process.exitcode(), -SIGKILL);
}

}  // namespace
