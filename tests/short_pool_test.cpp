// A pool left short of a worker it could not replace, under fiberrun (as users launch) and
// without oversubscription (FIBER_OVERSUBSCRIBE=0, set by CTest), so that the allocation's slots
// are all taken.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <thread>
#include <tuple>
#include <vector>

#include "support/tasks.hpp"

namespace {

using namespace std::chrono_literals;

long task_process_pid(int) { return static_cast<long>(getpid()); }
FIBER_TASK(task_process_pid);

// A worker starved past worker_timeout (stopped here with its task process, as an overloaded
// machine starves both) is taken for lost; with every slot taken, its replacement cannot be
// spawned. Once it answers again, the pool left short takes it back: a pool of one would
// otherwise wait for ever (found by slurm_python_requeue on a loaded machine).
TEST(ShortPool, APoolShortOfAWorkerItCouldNotReplaceTakesItBackOnceItAnswers) {
  fiber::Pool pool({.processes = 1, .worker_timeout = 1000ms});
  // Every free slot in this pool (and the workers parked by the tests before).
  const int slots = static_cast<int>(std::thread::hardware_concurrency());
  bool full = false;
  while (!full && pool.size() < slots) {
    try {
      pool.resize(pool.size() + 1);
    } catch (const fiber::SpawnError&) {
      full = true;
    }
  }
  ASSERT_TRUE(full) << "no SpawnError at " << slots << " workers: FIBER_OVERSUBSCRIBE=0 expected";
  const int size = pool.size();
  const long pid = pool.workers().at(0).pid;
  const long task_pid = pool.apply(task_process_pid, 0);
  std::vector<std::tuple<int, int>> naps(static_cast<std::size_t>(size), {0, 3000});
  auto busy = pool.map_async(fiber_test::sleep_then, naps, 1);  // the stopped one's too
  ASSERT_EQ(kill(static_cast<pid_t>(task_pid), SIGSTOP), 0);
  ASSERT_EQ(kill(static_cast<pid_t>(pid), SIGSTOP), 0);
  // Taken for lost after worker_timeout; its replacement finds no slot.
  while (pool.stats().workers_lost == 0) std::this_thread::sleep_for(10ms);
  kill(static_cast<pid_t>(task_pid), SIGCONT);
  kill(static_cast<pid_t>(pid), SIGCONT);
  // A bound on the wait, not a measurement: without the take-back, a pool of one never ends it.
  ASSERT_TRUE(busy.wait(60s)) << "the pool never had its worker back";
  EXPECT_EQ(pool.apply(fiber_test::square, 6), 36);
  EXPECT_EQ(pool.size(), size);
  bool back = false;
  for (const auto& worker : pool.workers()) back |= worker.pid == pid;
  EXPECT_TRUE(back) << "worker pid " << pid << " is not in the pool again";
}

}  // namespace
