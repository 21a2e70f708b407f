// The scheduler and pool sizing on their own: worker records whose channels lead back to this
// process (a duplicate of MPI_COMM_SELF each), so that what goes where, retries, losses,
// termination and autoscaling are checked without worker processes. Runs as one MPI process.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caller/job_state.hpp"
#include "dispatch/pool_sizing.hpp"
#include "dispatch/scheduler.hpp"
#include "dispatch/worker_set.hpp"
#include "fiber/errors.hpp"
#include "self_workers.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// Jobs here are never waited for by driving.
class NoDriver final : public ProgressDriver {
 public:
  bool drive(const std::function<bool()>&, std::optional<Clock::time_point>) override {
    return false;
  }
};

class Scheduling : public ::testing::Test {
 protected:
  // A worker record, parked; its messages go to this process and are never read.
  int add_parked_worker() { return self_workers::adopt(workers); }

  std::shared_ptr<PoolHandle> pool_of(int size, PoolOptions options = {}) {
    auto pool = std::make_shared<PoolHandle>(options);
    pool->autoscale_ceiling = options.max_workers;
    for (int i = 0; i < size; ++i) {
      add_parked_worker();
      workers.join(pool);
    }
    pool->target = size;
    pools.push_back(pool);
    return pool;
  }

  static std::shared_ptr<Job> job_of(std::size_t items, std::size_t chunksize = 0) {
    std::vector<std::uint64_t> offsets;
    for (std::size_t i = 0; i <= items; ++i) offsets.push_back(i);
    return std::make_shared<Job>("task", Bytes(items, 'x'), std::move(offsets), chunksize);
  }

  // The chunk sizes worker `id` holds, oldest first.
  std::vector<std::size_t> held_by(int id) {
    std::vector<std::size_t> sizes;
    for (const auto& chunk : workers[id].in_flight) sizes.push_back(chunk.count);
    return sizes;
  }

  // Worker `id`'s oldest chunk answered just now, each item in `seconds_per_item` (as the
  // dispatcher takes a result, and the worker set hears from the worker).
  InFlight answer(int id, double seconds_per_item) {
    Worker& worker = workers[id];
    InFlight chunk = worker.in_flight.front();
    worker.in_flight.pop_front();
    worker.last_result = now;
    workers.heard_from(id);
    scheduler.timings().record(chunk.job->state().task(),
                               static_cast<std::uint64_t>(seconds_per_item * 1e9 * chunk.count),
                               static_cast<std::uint32_t>(chunk.count));
    return chunk;
  }

  // What was sent is read here, so that every communicator can be disconnected.
  void TearDown() override { self_workers::drain(workers); }

  WorkerSet workers{WorkerSpawner({})};
  Scheduler scheduler{workers};
  NoDriver driver;
  PoolSizing sizing{workers, scheduler, driver};
  std::vector<std::shared_ptr<PoolHandle>> pools;
  Clock::time_point now = Clock::now();
};

TEST_F(Scheduling, EveryIdleWorkerGetsOneChunkOfAnUnmeasuredTask) {
  auto pool = pool_of(3);
  auto job = job_of(10);
  scheduler.enqueue(*pool, job);
  EXPECT_TRUE(scheduler.dispatch(pools, now));
  for (int id : pool->workers) EXPECT_EQ(held_by(id), std::vector<std::size_t>{1});
  EXPECT_EQ(pool->queue.front()->next_unsent, 3u);
  // Nobody answered yet: nothing more goes out.
  EXPECT_FALSE(scheduler.dispatch(pools, now));
}

TEST_F(Scheduling, AWorkerThatJustAnsweredGetsShortChunksQueued) {
  auto pool = pool_of(1);
  int id = pool->workers[0];
  scheduler.enqueue(*pool, job_of(1001));
  scheduler.dispatch(pools, now);
  answer(id, 0.9e-6);  // 0.9 us per item: measured short (555 items by time alone)
  scheduler.dispatch(pools, now);
  // Guided: half of what is left for one worker, then half of the rest; two in flight, since
  // chunks this short (0.5 ms, 0.25 ms of work) are queued behind the running one.
  EXPECT_EQ(held_by(id), (std::vector<std::size_t>{500, 250}));
}

TEST_F(Scheduling, AWorkerThatDidNotAnswerRecentlyGetsNothingQueued) {
  auto pool = pool_of(1);
  int id = pool->workers[0];
  scheduler.enqueue(*pool, job_of(1001));
  scheduler.dispatch(pools, now);
  answer(id, 0.9e-6);
  scheduler.dispatch(pools, now + 10ms);  // its answer is old by then
  EXPECT_EQ(held_by(id), std::vector<std::size_t>{500});
}

TEST_F(Scheduling, LongChunksGoOneAtATime) {
  auto pool = pool_of(1);
  int id = pool->workers[0];
  scheduler.enqueue(*pool, job_of(100));
  scheduler.dispatch(pools, now);
  answer(id, 10e-3);  // 10 ms per item
  scheduler.dispatch(pools, now);
  EXPECT_EQ(held_by(id), std::vector<std::size_t>{1});
}

TEST_F(Scheduling, AWorkerWhoseChunksWereAnsweredIsIdleAgainAndTakesTheNext) {
  auto pool = pool_of(2);
  scheduler.enqueue(*pool, job_of(5, /*chunksize=*/1));
  scheduler.dispatch(pools, now);
  int first = pool->workers[0];
  int second = pool->workers[1];
  EXPECT_TRUE(workers.any_in_flight());
  answer(first, 1e-3);
  EXPECT_TRUE(scheduler.dispatch(pools, now + 10ms));  // no prefetch by then: one chunk
  EXPECT_EQ(held_by(first), std::vector<std::size_t>{1});
  EXPECT_EQ(held_by(second), std::vector<std::size_t>{1});
  answer(first, 1e-3);
  answer(second, 1e-3);
  EXPECT_FALSE(workers.any_in_flight());
  EXPECT_TRUE(scheduler.dispatch(pools, now + 20ms));
  EXPECT_EQ(held_by(first), std::vector<std::size_t>{1});
  EXPECT_EQ(held_by(second), std::vector<std::size_t>{1});
  EXPECT_TRUE(pool->queue.empty());
}

// Also with Isolation::none: its workers send heartbeats from a thread while they run items
// (busy_heartbeat.hpp); before, a killed one was never noticed (batch_kill_test).
TEST_F(Scheduling, ABusyWorkerSilentTooLongIsTakenForLostWhateverItsIsolation) {
  auto isolated = pool_of(2, {.worker_timeout = 1s});
  auto inline_pool = pool_of(1, {.isolation = Isolation::none, .worker_timeout = 1s});
  scheduler.enqueue(*isolated, job_of(2, /*chunksize=*/1));
  scheduler.enqueue(*inline_pool, job_of(1));
  scheduler.dispatch(pools, now);
  int silent = isolated->workers[0];
  int talking = isolated->workers[1];
  int silent_inline = inline_pool->workers[0];
  workers[talking].last_heard = now + 1500ms;  // a heartbeat
  workers.heard_from(talking);
  auto lost = workers.newly_silent(now + 2s);
  ASSERT_EQ(lost.size(), 2u);
  std::set<int> ids{lost[0].first, lost[1].first};
  EXPECT_EQ(ids, (std::set<int>{silent, silent_inline}));
  EXPECT_TRUE(workers[silent].dead);
  EXPECT_TRUE(workers[silent_inline].dead);
  EXPECT_TRUE(workers.newly_silent(now + 2200ms).empty());
  EXPECT_EQ(workers.newly_silent(now + 3s).size(), 1u);  // the other one's turn
}

TEST_F(Scheduling, ARetryGoesFirstAndAnItemFailsAfterMaxRetries) {
  auto pool = pool_of(1, {.max_retries = 1});
  int id = pool->workers[0];
  auto first = job_of(1);
  auto second = job_of(3);
  scheduler.enqueue(*pool, first);
  scheduler.enqueue(*pool, second);
  scheduler.dispatch(pools, now);
  InFlight chunk = answer(id, 1e-3);
  ASSERT_EQ(chunk.job->job, first);
  auto error = std::make_exception_ptr(WorkerLost("crashed"));
  scheduler.retry_or_fail(chunk, 0, error);
  EXPECT_EQ(pool->queue.front()->job, first);  // ahead of the job not yet sent
  EXPECT_EQ(pool->counters.retried.load(), 1u);
  EXPECT_FALSE(first->done());
  scheduler.retry_or_fail(chunk, 0, error);  // the second failure: given up
  ASSERT_TRUE(first->done());
  EXPECT_FALSE(first->succeeded(0));
  EXPECT_THROW(first->result(0), WorkerLost);
  EXPECT_EQ(pool->counters.failed.load(), 1u);
}

TEST_F(Scheduling, ALostWorkersFirstItemIsCountedAndTheRestAreSentAgain) {
  auto pool = pool_of(1);
  int id = pool->workers[0];
  scheduler.enqueue(*pool, job_of(4, /*chunksize=*/4));
  scheduler.dispatch(pools, now);
  auto scheduled = workers[id].in_flight.front().job;
  scheduler.reschedule_lost(workers.lose(id), "lost");
  EXPECT_TRUE(workers[id].in_flight.empty());
  EXPECT_EQ(scheduled->failed_attempts.at(0), 1);
  EXPECT_FALSE(scheduled->failed_attempts.contains(1));
  ASSERT_EQ(scheduled->requeued.size(), 2u);
  EXPECT_EQ(scheduled->requeued[0], (std::pair<std::size_t, std::size_t>{0, 1}));
  EXPECT_EQ(scheduled->requeued[1], (std::pair<std::size_t, std::size_t>{1, 3}));
  EXPECT_EQ(scheduled->backlog(), 4u);
}

TEST_F(Scheduling, TerminateFailsWhatIsQueuedAndWhatIsInFlight) {
  auto pool = pool_of(2);
  auto job = job_of(10);
  scheduler.enqueue(*pool, job);
  scheduler.dispatch(pools, now);
  scheduler.terminate(*pool);
  ASSERT_TRUE(job->done());
  for (std::size_t i = 0; i < job->size(); ++i) EXPECT_THROW(job->result(i), PoolClosed);
  EXPECT_TRUE(pool->queue.empty());
  scheduler.enqueue(*pool, job_of(1));
  EXPECT_FALSE(scheduler.dispatch(pools, now));  // a terminated pool sends nothing
}

TEST_F(Scheduling, ItemsOfAnEndedPoolAreNotSentAgain) {
  auto pool = pool_of(1);
  auto job = job_of(2, 2);
  scheduler.enqueue(*pool, job);
  scheduler.dispatch(pools, now);
  pool->released = true;
  scheduler.requeue(workers[pool->workers[0]].in_flight.front(), 0, 2);
  ASSERT_TRUE(job->done());
  EXPECT_THROW(job->result(1), PoolClosed);
}

TEST_F(Scheduling, AutoscalingGrowsOnABacklogUpToMaxWorkersFromParkedWorkers) {
  auto pool = pool_of(0, {.min_workers = 1, .max_workers = 2});
  for (int i = 0; i < 3; ++i) add_parked_worker();
  scheduler.enqueue(*pool, job_of(10));
  sizing.autoscale(pools, now);
  EXPECT_EQ(pool->workers.size(), 2u);
  EXPECT_EQ(workers.parked_count(), 1);
  EXPECT_EQ(workers.count(), 3);  // nothing spawned
}

TEST_F(Scheduling, AutoscalingParksIdleWorkersDownToMinWorkers) {
  auto pool = pool_of(3, {.min_workers = 1, .max_workers = 3, .scale_down_after = 5s});
  sizing.autoscale(pools, now);  // idle, but not for long
  EXPECT_EQ(pool->workers.size(), 3u);
  sizing.autoscale(pools, now + 10s);
  EXPECT_EQ(pool->workers.size(), 1u);
  EXPECT_EQ(workers.parked_count(), 2);
}

TEST_F(Scheduling, ShrinkingTakesTheLeastBusyWorkersFirst) {
  auto pool = pool_of(2);
  scheduler.enqueue(*pool, job_of(1));
  scheduler.dispatch(pools, now);
  int busy = workers[pool->workers[0]].in_flight.empty() ? pool->workers[1] : pool->workers[0];
  int idle = busy == pool->workers[0] ? pool->workers[1] : pool->workers[0];
  ASSERT_EQ(workers[busy].in_flight.size(), 1u);
  ASSERT_TRUE(workers[idle].in_flight.empty());
  sizing.shrink(*pool, 1);
  EXPECT_EQ(pool->workers, std::vector<int>{busy});
  EXPECT_EQ(pool->target, 1);
  // The busy one parks only once its chunk is answered.
  sizing.shrink(*pool, 1);
  EXPECT_EQ(workers.parked_count(), 1);
  answer(busy, 1e-3);
  workers.park_if_drained(busy);
  EXPECT_EQ(workers.parked_count(), 2);
}

}  // namespace
}  // namespace fiber::detail
