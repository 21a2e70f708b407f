// The master's end of a lane (dispatch/lane.hpp) over a real task process: a TaskProcess forked
// here stands for the worker's, and the lane maps its memory through /proc, as the master maps a
// worker's. Chunks go in and come back as the result entries a worker would have sent; a crash, a
// timeout and a termination end every chunk exactly once.
#include "dispatch/lane.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fiber/errors.hpp"
#include "fiber/task.hpp"
#include "posix/unique_fd.hpp"
#include "shm/lane_doorbell.hpp"
#include "support/run_bodies.hpp"
#include "wire/entry_list.hpp"
#include "wire/result_entry.hpp"
#include "worker/task_process.hpp"

namespace {

using namespace std::chrono_literals;
using fiber::Bytes;
using fiber::detail::ChunkStatus;
using fiber::detail::Lane;
using fiber::detail::ResultHeader;
using fiber::detail::TaskProcess;
using Clock = std::chrono::steady_clock;

int lane_triple(int x) { return 3 * x; }
FIBER_TASK(lane_triple);

int lane_crash_on(int x) {
  if (x < 0) std::raise(SIGSEGV);
  return x;
}
FIBER_TASK(lane_crash_on);

int lane_nap(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return milliseconds;
}
FIBER_TASK(lane_nap);

template <class F>
Bytes argument(F task, int x) {
  return fiber::call(task, x).arguments;
}

// A loaded machine is slow, a lost answer fails.
constexpr std::chrono::milliseconds kPatience = 10s;

// A result entry, read back.
struct Result {
  ResultHeader header;
  std::vector<fiber::unit::ItemOutcome> items;
  std::string reason;
};

Result read_result(const Bytes& entry) {
  fiber::detail::ResultEntryReader reader(entry);
  Result result{reader.header(), {}, {}};
  for (std::uint32_t i = 0; i < result.header.count; ++i) {
    auto record = reader.next_item();
    result.items.push_back({record.ok, Bytes(record.bytes.begin(), record.bytes.end())});
  }
  if (fiber::detail::has_reason(result.header.status)) result.reason = reader.reason();
  return result;
}

// A task process and the lane to it, with the results the lane made.
class LaneTest : public ::testing::Test {
 protected:
  void SetUp() override { process_.start(); }

  void attach() { lane_.attach(getpid(), process_.memory_fd(), doorbell_.lent_fd(), Clock::now()); }

  void send(const Bytes& body) { lane_.send(body, Clock::now()); }

  // Progresses the lane until it has made `count` results in all.
  void await_results(std::size_t count) {
    for (auto deadline = Clock::now() + kPatience; results_.size() < count;) {
      ASSERT_LT(Clock::now(), deadline) << results_.size() << " results, not " << count;
      if (!lane_.progress(Clock::now())) std::this_thread::sleep_for(100us);
    }
  }

  TaskProcess process_;
  fiber::detail::LaneDoorbell doorbell_;
  std::vector<Result> results_;
  Lane lane_{1, [this](std::shared_ptr<Bytes> entry) { results_.push_back(read_result(*entry)); }};
};

TEST_F(LaneTest, ChunksComeBackCompleteInTheOrderSent) {
  attach();
  for (int chunk = 1; chunk <= 3; ++chunk) {
    send(fiber::unit::run_body("lane_triple",
                               {argument(lane_triple, chunk), argument(lane_triple, 10 * chunk)},
                               {.chunk_id = static_cast<std::uint64_t>(chunk)}));
  }
  await_results(3);
  for (int chunk = 1; chunk <= 3; ++chunk) {
    const Result& result = results_[chunk - 1];
    EXPECT_EQ(result.header.chunk_id, static_cast<std::uint64_t>(chunk));
    EXPECT_EQ(result.header.status, ChunkStatus::complete);
    ASSERT_EQ(result.items.size(), 2u);
    EXPECT_EQ(fiber::decode<int>(result.items[0].bytes), 3 * chunk);
    EXPECT_EQ(fiber::decode<int>(result.items[1].bytes), 30 * chunk);
  }
  EXPECT_TRUE(lane_.idle());
}

TEST_F(LaneTest, ChunksSentBeforeTheLaneIsLentRunOnceItIs) {
  send(fiber::unit::run_body("lane_triple", {argument(lane_triple, 2)}, {.chunk_id = 5}));
  EXPECT_FALSE(lane_.progress(Clock::now()));
  EXPECT_FALSE(lane_.idle());
  attach();
  await_results(1);
  EXPECT_EQ(fiber::decode<int>(results_.at(0).items.at(0).bytes), 6);
}

TEST_F(LaneTest, ChunksOfALaneNeverLentGoBackAsARunList) {
  auto first = fiber::unit::run_body("lane_triple", {argument(lane_triple, 1)}, {.chunk_id = 1});
  auto second = fiber::unit::run_body("lane_triple", {argument(lane_triple, 2)}, {.chunk_id = 2});
  send(first);
  send(second);
  std::vector<Bytes> bodies;
  fiber::detail::for_each_entry(lane_.take_unsent(), [&](std::span<const char> body) {
    bodies.emplace_back(body.begin(), body.end());
  });
  EXPECT_EQ(bodies, (std::vector<Bytes>{first, second}));
}

// The worker reports the death (lane_lost); the lane takes what the task process wrote before.
TEST_F(LaneTest, ACrashEndsItsChunkOnTheItemItRanAndTheRestAreNotRun) {
  attach();
  send(fiber::unit::run_body("lane_triple", {argument(lane_triple, 1)}, {.chunk_id = 1}));
  send(fiber::unit::run_body(
      "lane_crash_on",
      {argument(lane_crash_on, 4), argument(lane_crash_on, -1), argument(lane_crash_on, 5)},
      {.chunk_id = 2}));
  send(fiber::unit::run_body("lane_triple", {argument(lane_triple, 3)}, {.chunk_id = 3}));
  ASSERT_TRUE(process_.wait_for_death(kPatience));
  lane_.lost("the task process " + process_.death(), Clock::now());
  ASSERT_EQ(results_.size(), 3u);
  EXPECT_EQ(results_[0].header.status, ChunkStatus::complete);
  EXPECT_EQ(results_[1].header.status, ChunkStatus::crashed);
  // Item 0's record was not written yet (a chunk's records go out at its end): it runs again,
  // and item 1 is the one blamed.
  EXPECT_EQ(results_[1].header.count, 0u);
  EXPECT_EQ(results_[1].header.failed_item, 1u);
  EXPECT_EQ(results_[1].reason, "the task process killed by signal SIGSEGV (Segmentation fault)");
  EXPECT_EQ(results_[2].header.chunk_id, 3u);
  EXPECT_EQ(results_[2].header.status, ChunkStatus::not_run);
  EXPECT_TRUE(lane_.idle());
}

// The lane sees the deadline pass on the progress page and asks for the kill once; the death that
// follows is the timeout's.
TEST_F(LaneTest, AnItemPastItsTimeoutIsAskedToBeKilledOnceAndEndsTimedOut) {
  attach();
  send(fiber::unit::run_body("lane_nap", {argument(lane_nap, 1), argument(lane_nap, 60'000)},
                             {.chunk_id = 9, .timeout_ms = 50}));
  std::optional<Lane::Overdue> overdue;
  for (auto deadline = Clock::now() + kPatience; !overdue; std::this_thread::sleep_for(1ms)) {
    ASSERT_LT(Clock::now(), deadline);
    lane_.progress(Clock::now());
    overdue = lane_.newly_overdue(Clock::now());
  }
  EXPECT_EQ(overdue->chunk, 9u);
  EXPECT_EQ(overdue->item, 1u);
  EXPECT_FALSE(lane_.newly_overdue(Clock::now()));  // asked once
  EXPECT_EQ(process_.current_item(), overdue->item);
  lane_.lost("the task process " + process_.kill(), Clock::now());
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].header.status, ChunkStatus::timed_out);
  EXPECT_EQ(results_[0].header.failed_item, 1u);
  EXPECT_EQ(results_[0].reason, "the task ran longer than its timeout of 0.05 s and was killed");
}

TEST_F(LaneTest, ATerminatedPoolsChunksEndCancelled) {
  attach();
  send(fiber::unit::run_body("lane_nap", {argument(lane_nap, 60'000)}, {.chunk_id = 1}));
  send(fiber::unit::run_body("lane_triple", {argument(lane_triple, 1)}, {.chunk_id = 2}));
  lane_.cancel_all();
  ASSERT_EQ(results_.size(), 2u);
  for (const auto& result : results_) EXPECT_EQ(result.header.status, ChunkStatus::cancelled);
  EXPECT_TRUE(lane_.idle());
}

TEST_F(LaneTest, TheDoorbellOpenedWithTheLaneWakesItsWorker) {
  attach();
  EXPECT_FALSE(doorbell_.answer());
  lane_.doorbell()->ring();
  lane_.doorbell()->ring();
  EXPECT_TRUE(doorbell_.answer());  // both rings at once
  EXPECT_FALSE(doorbell_.answer());
}

// The worker's sleep while its task process is lent: a ring ends it, and is not a death; a death
// still is.
TEST_F(LaneTest, ARingEndsTheWorkersWaitForItsTaskProcessAndADeathStillDoes) {
  attach();
  EXPECT_FALSE(process_.wait_for_death(1ms, doorbell_.fd()));  // nothing: the nap passes
  lane_.doorbell()->ring();
  auto started = Clock::now();
  EXPECT_FALSE(process_.wait_for_death(kPatience, doorbell_.fd()));
  EXPECT_LT(Clock::now() - started, kPatience);  // ended by the ring, not the time
  EXPECT_TRUE(doorbell_.answer());
  send(fiber::unit::run_body("lane_crash_on", {argument(lane_crash_on, -1)}, {.chunk_id = 1}));
  ASSERT_TRUE(process_.wait_for_death(kPatience, doorbell_.fd()));
  lane_.lost("the task process " + process_.death(), Clock::now());
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].header.status, ChunkStatus::crashed);
}

TEST(LaneDoorbell, RingingAGoneOrFullDoorbellNeitherBlocksNorRaisesSigpipe) {
  std::optional<fiber::detail::LaneDoorbell> doorbell(std::in_place);
  auto ring = fiber::detail::LaneDoorbellRing::open(getpid(), doorbell->lent_fd());
  for (int i = 0; i < 200'000; ++i) ring.ring();  // past a pipe's 64 KiB: full, not blocked
  EXPECT_TRUE(doorbell->answer());
  doorbell.reset();  // the worker's ends are closed, as when it died
  ring.ring();       // SIGPIPE would end this test process here
}

TEST(LaneDoorbell, AnotherFileIsNotTakenForADoorbell) {
  fiber::posix::UniqueFd file(memfd_create("not-a-doorbell", MFD_CLOEXEC));
  ASSERT_TRUE(file);
  EXPECT_THROW(fiber::detail::LaneDoorbellRing::open(getpid(), file.get()), fiber::Error);
  EXPECT_THROW(fiber::detail::LaneDoorbellRing::open(getpid(), 100'000), fiber::Error);
}

TEST(TaskMemory, AnotherFileIsNotTakenForATaskProcessesMemory) {
  fiber::posix::UniqueFd file(memfd_create("not-a-task-memory", MFD_CLOEXEC));
  ASSERT_TRUE(file);
  EXPECT_THROW(fiber::detail::TaskMemory::open(getpid(), file.get()), fiber::Error);
  EXPECT_THROW(fiber::detail::TaskMemory::open(getpid(), 100'000), fiber::Error);
}

}  // namespace
