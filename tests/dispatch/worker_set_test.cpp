// WorkerSet (dispatch/worker_set.hpp) on its own: worker records whose channels lead back to this
// process (self_workers.hpp), so that what the master sends a worker arrives here and poll()
// reads it as if the worker had sent it. Membership and parking, batched and lone chunks, the
// lane asked for on the master's host, lost, revived, unreachable and abandoned workers. Runs as
// one MPI process.
#include "dispatch/worker_set.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "caller/job_state.hpp"
#include "dispatch/scheduled_job.hpp"
#include "self_workers.hpp"
#include "this_process.hpp"
#include "wire/channel.hpp"
#include "wire/entry_list.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// A message as poll() took it: from which worker, of which kind, with how many list entries.
struct Received {
  int worker;
  MessageKind kind;
  std::size_t entries;
};

// Lanes off unless a test turns them on (a record here has no task process to lend): set before
// the fixture's worker set reads it.
struct LanesOff {
  LanesOff() { setenv("FIBER_LANES", "0", 1); }
};

class WorkerSetTest : public ::testing::Test, LanesOff {
 protected:
  // A pool of `size` workers, each adopted parked and then joined.
  std::shared_ptr<PoolHandle> pool_of(int size, PoolOptions options = {}) {
    auto pool = std::make_shared<PoolHandle>(options);
    for (int i = 0; i < size; ++i) {
      self_workers::adopt(workers, /*post_receive=*/true);
      workers.join(pool);
    }
    return pool;
  }

  static std::shared_ptr<ScheduledJob> job_of(std::size_t items, std::size_t item_bytes = 1) {
    std::vector<std::uint64_t> offsets;
    for (std::size_t i = 0; i <= items; ++i) offsets.push_back(i * item_bytes);
    return std::make_shared<ScheduledJob>(
        std::make_shared<Job>("task", Bytes(items * item_bytes, 'x'), std::move(offsets), 1));
  }

  // What arrived at `set`'s records since the last call (every message the master sent them):
  // polled until kQuietRounds polls in a row take nothing.
  static std::vector<Received> received(WorkerSet& set) {
    std::vector<Received> messages;
    for (int quiet = 0; quiet < kQuietRounds;) {
      bool arrived = set.poll(Clock::now(), [&](int id, Message& message) {
        std::size_t entries = 0;
        if (message.kind == MessageKind::run || message.kind == MessageKind::result) {
          for_each_entry(message.body, [&](std::span<const char>) { ++entries; });
        }
        messages.push_back({id, message.kind, entries});
      });
      quiet = arrived ? 0 : quiet + 1;
    }
    return messages;
  }
  std::vector<Received> received() { return received(workers); }

  // The kinds of what arrived since the last call, in order.
  static std::vector<MessageKind> kinds_received(WorkerSet& set) {
    std::vector<MessageKind> kinds;
    for (const auto& message : received(set)) kinds.push_back(message.kind);
    return kinds;
  }
  std::vector<MessageKind> kinds_received() { return kinds_received(workers); }

  void TearDown() override { self_workers::drain(workers); }

  // A self-sent message, even one of several pieces, completes within a few tests of its
  // receive: this many empty polls in a row mean nothing more is on its way.
  static constexpr int kQuietRounds = 20;
  WorkerSet workers{WorkerSpawner({})};
  Clock::time_point now = Clock::now();
};

TEST_F(WorkerSetTest, JoinTakesAParkedWorkerAndLeavingParksItOnceItsChunksAreAnswered) {
  self_workers::adopt(workers, /*post_receive=*/true);
  self_workers::adopt(workers, /*post_receive=*/true);
  EXPECT_EQ(workers.count(), 2);
  EXPECT_EQ(workers.parked_count(), 2);
  auto pool = std::make_shared<PoolHandle>(PoolOptions{.isolation = Isolation::none});
  int id = workers.join(pool);
  EXPECT_EQ(workers.parked_count(), 1);
  EXPECT_EQ(pool->workers, std::vector<int>{id});
  EXPECT_EQ(workers[id].pool, pool);
  EXPECT_FALSE(workers[id].parked);

  workers.send_chunk(id, pool, job_of(1), 0, 1, 0, nullptr, now);
  workers.leave_pool(id);
  EXPECT_TRUE(pool->workers.empty());
  EXPECT_EQ(workers.parked_count(), 1) << "it still holds a chunk";
  workers[id].in_flight.clear();  // answered
  workers.park_if_drained(id);
  EXPECT_EQ(workers.parked_count(), 2);
  EXPECT_TRUE(workers[id].parked);
  EXPECT_EQ(kinds_received(), (std::vector<MessageKind>{MessageKind::run, MessageKind::park}));
}

TEST_F(WorkerSetTest, SmallChunksTravelAsOneBatchAndALargeOneAlone) {
  auto pool = pool_of(1, {.isolation = Isolation::none});
  int id = pool->workers[0];
  auto small = job_of(3);
  Batch batch(MessageKind::run);
  for (std::size_t item = 0; item < 3; ++item) {
    workers.send_chunk(id, pool, small, item, 1, 0, &batch, now);
  }
  EXPECT_TRUE(received().empty()) << "a batch waits to be sent";
  workers.send(id, batch);
  auto large = job_of(1, kBatchedEntryBytes + 1);
  workers.send_chunk(id, pool, large, 0, 1, 0, &batch, now);
  EXPECT_TRUE(batch.empty()) << "a large chunk does not join the batch";
  auto messages = received();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].kind, MessageKind::run);
  EXPECT_EQ(messages[0].entries, 3u);
  EXPECT_EQ(messages[1].kind, MessageKind::run);
  EXPECT_EQ(messages[1].entries, 1u);
  EXPECT_EQ(workers[id].in_flight.size(), 4u);
  EXPECT_TRUE(workers.any_in_flight());
}

TEST_F(WorkerSetTest, AWorkerHeardFromWithNothingLeftIsIdleAndAnswered) {
  auto pool = pool_of(1, {.isolation = Isolation::none});
  int id = pool->workers[0];
  pool->idle.pop();  // (joined idle: taken by a dispatch)
  workers.send_chunk(id, pool, job_of(1), 0, 1, 0, nullptr, now);
  workers[id].in_flight.clear();
  workers.heard_from(id);
  EXPECT_FALSE(workers.any_in_flight());
  EXPECT_EQ(pool->idle.pop(), id);
  EXPECT_EQ(pool->answered.pop(), id);
}

TEST_F(WorkerSetTest, AChunkForAnIsolatedPoolOnTheMastersHostAsksForALaneFirst) {
  unsetenv("FIBER_LANES");
  WorkerSet laned{WorkerSpawner({})};
  auto pool = std::make_shared<PoolHandle>(PoolOptions{});
  int id = self_workers::adopt(laned, /*post_receive=*/true);
  laned[id].info.host = this_process().host;
  laned.join(pool);
  laned.send_chunk(id, pool, job_of(1), 0, 1, 0, nullptr, now);
  auto kinds = kinds_received(laned);
  // The chunk waits in the lane for the worker's answer: it is not sent through MPI.
  EXPECT_EQ(kinds, std::vector<MessageKind>{MessageKind::lane_open});
  EXPECT_TRUE(laned[id].lane);
  self_workers::drain(laned);
}

TEST_F(WorkerSetTest, ALostWorkerGivesBackItsChunksAndARevivedOneDropsWhatItHeldAndParks) {
  auto pool = pool_of(2, {.isolation = Isolation::none});
  int lost = pool->workers[0];
  workers.send_chunk(lost, pool, job_of(2), 0, 1, 0, nullptr, now);
  workers.send_chunk(lost, pool, job_of(2), 1, 1, 0, nullptr, now);
  received();
  auto chunks = workers.lose(lost);
  EXPECT_EQ(chunks.size(), 2u);
  EXPECT_TRUE(workers[lost].dead);
  EXPECT_TRUE(workers[lost].in_flight.empty());
  EXPECT_FALSE(workers.any_in_flight());

  workers.leave_pool(lost);
  workers.revive(lost);
  EXPECT_FALSE(workers[lost].dead);
  EXPECT_TRUE(workers[lost].parked);
  EXPECT_EQ(workers[lost].stale_chunks_below, workers.next_chunk_id());
  EXPECT_EQ(kinds_received(), (std::vector<MessageKind>{MessageKind::drop, MessageKind::park}));
}

// docs/design.md, "Parked workers lend their slots": 4 parked one-core workers of one node make
// two two-core ones, each with a lender, without a spawn (the spawner here has no program); a
// one-core pool takes all four back; a lost wide worker gives its lender back.
TEST_F(WorkerSetTest, ParkedNarrowWorkersLendTheirSlotsToAWiderShapeAndTakeThemBack) {
  const WorkerShape one_core{.cores = 1};
  const WorkerShape two_cores{.cores = 2};
  for (int i = 0; i < 4; ++i) {
    Worker& worker = workers[self_workers::adopt(workers, /*post_receive=*/true)];
    worker.spawned_as = worker.shape = one_core;
    worker.info.host = "nodeB";
    worker.node = {"nodeB", {0, 1, 2, 3}, {}};
  }
  auto wide =
      std::make_shared<PoolHandle>(PoolOptions{.isolation = Isolation::none, .shape = two_cores});
  std::set<int> wide_cpus;
  for (int i = 0; i < 2; ++i) {
    const Worker& worker = workers[workers.join(wide)];
    EXPECT_EQ(worker.shape, two_cores);
    EXPECT_EQ(worker.lenders.size(), 1u);
    wide_cpus.insert(worker.placement.cpus.begin(), worker.placement.cpus.end());
  }
  EXPECT_EQ(wide_cpus, (std::set<int>{0, 1, 2, 3})) << "two wide workers on the same cores";
  EXPECT_EQ(workers.count(), 4) << "a worker was spawned";
  EXPECT_EQ(workers.parked_count(), 2) << "the lenders stay parked";

  for (int id : std::vector<int>(wide->workers)) workers.leave_pool(id);
  auto narrow =
      std::make_shared<PoolHandle>(PoolOptions{.isolation = Isolation::none, .shape = one_core});
  for (int i = 0; i < 4; ++i) {
    const Worker& worker = workers[workers.join(narrow)];
    EXPECT_EQ(worker.shape, one_core);
    EXPECT_TRUE(worker.lenders.empty());
    EXPECT_FALSE(worker.lending_to);
  }
  EXPECT_EQ(workers.count(), 4) << "a worker was spawned";

  for (int id : std::vector<int>(narrow->workers)) workers.leave_pool(id);
  int lost = workers.join(wide);
  ASSERT_EQ(workers[lost].lenders.size(), 1u);
  int lender = workers[lost].lenders.front();
  workers.lose(lost);
  EXPECT_FALSE(workers[lender].lending_to);
  EXPECT_EQ(workers[lender].shape, one_core);
}

TEST_F(WorkerSetTest, AWorkerWhoseChannelFailedIsUnreachableOnce) {
  auto pool = pool_of(2, {.isolation = Isolation::none});
  int broken = pool->workers[1];
  EXPECT_TRUE(workers.newly_unreachable().empty());
  workers[broken].channel.fail("its connection broke");
  EXPECT_EQ(workers.newly_unreachable(), std::vector<int>{broken});
  EXPECT_TRUE(workers[broken].unreachable);
  EXPECT_TRUE(workers.newly_unreachable().empty());
}

TEST_F(WorkerSetTest, AbandoningCutsEveryChunkOffAndTellsTheirWorkersToDropThem) {
  auto pool = pool_of(2, {.isolation = Isolation::none});
  workers.send_chunk(pool->workers[0], pool, job_of(3), 0, 2, 0, nullptr, now);
  workers.send_chunk(pool->workers[1], pool, job_of(3), 2, 1, 0, nullptr, now);
  received();
  auto abandoned = workers.abandon_in_flight();
  ASSERT_EQ(abandoned.size(), 2u);
  EXPECT_EQ(abandoned[0].count + abandoned[1].count, 3u);
  EXPECT_FALSE(workers.any_in_flight());
  EXPECT_EQ(kinds_received(), (std::vector<MessageKind>{MessageKind::drop, MessageKind::drop}));
}

TEST_F(WorkerSetTest, ABusyWorkerSilentPastItsTimeoutIsNamedOnce) {
  auto pool = pool_of(1, {.isolation = Isolation::none, .worker_timeout = 1s});
  int id = pool->workers[0];
  workers.send_chunk(id, pool, job_of(1), 0, 1, 0, nullptr, now);
  EXPECT_TRUE(workers.newly_silent(now + 500ms).empty());
  std::vector<std::pair<int, std::string>> silent;
  // Looked at every half second, as a dispatcher's rounds would.
  for (auto at = now + 1s; silent.empty() && at < now + 3s; at += 500ms) {
    silent = workers.newly_silent(at);
  }
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].first, id);
  EXPECT_NE(silent[0].second.find("stopped answering"), std::string::npos) << silent[0].second;
  EXPECT_TRUE(workers[id].dead);
  EXPECT_TRUE(workers.newly_silent(now + 3500ms).empty());
}

TEST_F(WorkerSetTest, AGapInTheDispatchersOwnLooksIsNobodysSilence) {
  auto pool = pool_of(1, {.isolation = Isolation::none, .worker_timeout = 1s});
  workers.send_chunk(pool->workers[0], pool, job_of(1), 0, 1, 0, nullptr, now);
  EXPECT_TRUE(workers.newly_silent(now + 100ms).empty());
  // The dispatcher itself did not run for longer than kDispatcherStall: nobody was listened to.
  auto after_stall = now + 100ms + WorkerSet::kDispatcherStall + 1s;
  EXPECT_TRUE(workers.newly_silent(after_stall).empty());
  EXPECT_FALSE(workers[pool->workers[0]].dead);
}

}  // namespace
}  // namespace fiber::detail
