// Every Pool method on 0, 1 and 100,000 items: results, order, exactly once.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "support/shared_pool_test.hpp"
#include "support/tasks.hpp"

namespace {

using fiber_test::add;
using fiber_test::sleep_then;
using fiber_test::square;
using namespace std::chrono_literals;

// 0, 1, ..., wrapping at 40,000 so that squares fit an int.
std::vector<int> iota(int n) {
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = i % 40'000;
  return values;
}

std::vector<int> squares(int n) {
  std::vector<int> values = iota(n);
  for (int& value : values) value *= value;
  return values;
}

std::vector<std::tuple<int, int>> pairs(int n) {
  std::vector<std::tuple<int, int>> values;
  for (int i = 0; i < n; ++i) values.emplace_back(i, 2 * i);
  return values;
}

class PoolMethods : public fiber_test::SharedPoolTest<PoolMethods, ::testing::TestWithParam<int>> {
};

TEST_P(PoolMethods, MapKeepsItemOrder) {
  int n = GetParam();
  EXPECT_EQ(pool->map(square, iota(n)), squares(n));
}

TEST_P(PoolMethods, MapWithExplicitChunksizes) {
  int n = GetParam();
  for (std::size_t chunksize : {1, 7, 1000}) {
    EXPECT_EQ(pool->map(square, iota(n), chunksize), squares(n)) << "chunksize " << chunksize;
  }
}

TEST_P(PoolMethods, MapAsync) {
  int n = GetParam();
  auto pending = pool->map_async(square, iota(n));
  EXPECT_EQ(pending.get(), squares(n));
  EXPECT_TRUE(pending.ready());
  EXPECT_TRUE(pending.successful());
}

TEST_P(PoolMethods, StarmapUnpacksTuples) {
  int n = GetParam();
  std::vector<int> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = 3 * i;
  EXPECT_EQ(pool->starmap(add, pairs(n)), expected);
  EXPECT_EQ(pool->starmap_async(add, pairs(n), 3).get(), expected);
  EXPECT_EQ(pool->map(add, pairs(n)), expected);  // map unpacks for a task of two parameters
}

TEST_P(PoolMethods, ImapStreamsInItemOrder) {
  int n = GetParam();
  std::vector<int> streamed;
  for (int value : pool->imap(square, iota(n))) streamed.push_back(value);
  EXPECT_EQ(streamed, squares(n));
}

TEST_P(PoolMethods, ImapUnorderedYieldsEveryResultExactlyOnce) {
  int n = GetParam();
  std::vector<int> streamed;
  for (int value : pool->imap_unordered(square, iota(n))) streamed.push_back(value);
  auto expected = squares(n);
  std::sort(streamed.begin(), streamed.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(streamed, expected);
}

TEST_P(PoolMethods, ApplyAsyncOnEveryItem) {
  int n = GetParam();
  std::vector<fiber::AsyncResult<int>> pending;
  for (int i : iota(n)) pending.push_back(pool->apply_async(square, i));
  std::vector<int> results;
  for (auto& result : pending) results.push_back(result.get());
  EXPECT_EQ(results, squares(n));
}

INSTANTIATE_TEST_SUITE_P(Sizes, PoolMethods, ::testing::Values(0, 1, 100'000),
                         [](const auto& test) { return "items" + std::to_string(test.param); });

TEST(Pool, ApplyConvertsArgumentsToParameterTypes) {
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(add, 2, 3), 5);
  EXPECT_EQ(pool.apply(add, 2.9, short{3}), 5);  // converted as a direct call would
}

TEST(Pool, ImapUnorderedYieldsInCompletionOrder) {
  fiber::Pool pool({.processes = 2});
  // Item 0 sleeps long on one worker while the other worker finishes items 1..4.
  std::vector<std::tuple<int, int>> calls{{0, 1500}, {1, 0}, {2, 10}, {3, 20}, {4, 30}};
  std::vector<int> order;
  for (int value : pool.imap_unordered(sleep_then, calls, 1)) order.push_back(value);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order.back(), 0);
  EXPECT_EQ(std::set<int>(order.begin(), order.end()), (std::set<int>{0, 1, 2, 3, 4}));
}

TEST(Pool, ImapYieldsEarlyResultsBeforeLateOnesFinish) {
  fiber::Pool pool({.processes = 2});
  std::vector<std::tuple<int, int>> calls{{0, 0}, {1, 1500}};
  auto stream = pool.imap(sleep_then, calls, 1);
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(stream.next(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1400ms);  // did not wait for item 1
  EXPECT_EQ(stream.next(), 1);
  EXPECT_EQ(stream.next(), std::nullopt);
}

TEST(AsyncResult, GetWithTimeoutWaitReady) {
  fiber::Pool pool({.processes = 1});
  auto slow = pool.apply_async(sleep_then, 7, 800);
  EXPECT_FALSE(slow.ready());
  EXPECT_THROW(slow.successful(), std::logic_error);
  EXPECT_THROW(slow.get(50ms), fiber::TimeoutError);
  EXPECT_FALSE(slow.wait(10ms));
  slow.wait();
  EXPECT_TRUE(slow.ready());
  EXPECT_TRUE(slow.successful());
  EXPECT_EQ(slow.get(1s), 7);
  EXPECT_EQ(slow.get(), 7);  // again: results can be read more than once
}

TEST(Pool, JoinWithATimeoutSaysWhetherTheWorkIsFinished) {
  fiber::Pool pool({.processes = 1});
  auto slow = pool.apply_async(sleep_then, 7, 800);
  EXPECT_THROW(pool.join(10ms), std::logic_error);  // still running
  pool.close();
  EXPECT_FALSE(pool.join(10ms));
  EXPECT_FALSE(slow.ready());
  while (!pool.join(50ms)) {
  }
  EXPECT_EQ(slow.get(0ms), 7);
  EXPECT_TRUE(pool.join(0ms));  // nothing left to wait for
}

TEST(Pool, MillionsOfItemsInAutomaticChunksAndBatchedMessages) {
  // Automatic chunks of thousands of small items: several go to a worker in one message, which
  // then passes the eager size, so MPI sends it after the call that posted it returned: every
  // result is right only if the batch's bytes live until the send completes.
  for (auto isolation : {fiber::Isolation::none, fiber::Isolation::process}) {
    fiber::Pool pool({.processes = 4, .isolation = isolation});
    EXPECT_EQ(pool.map(square, iota(2'000'000)), squares(2'000'000));
  }
}

// CTest starts the tests on this machine, under no batch system and with no hostfile: there a
// slot is a processor of the machine (PoolOptions::processes), as oversubscription_test counts
// them too.
TEST(Pool, DefaultSizeIsOneWorkerPerSlot) {
  const int slots = static_cast<int>(std::thread::hardware_concurrency());
  ASSERT_GT(slots, 0) << "the machine does not say how many processors it has";
  fiber::Pool pool;
  EXPECT_EQ(pool.size(), slots);
  EXPECT_EQ(pool.stats().workers, slots);
  std::set<long> pids;
  for (const auto& worker : pool.workers()) pids.insert(worker.pid);
  EXPECT_EQ(pids.size(), static_cast<std::size_t>(slots)) << "one worker process per slot";
  EXPECT_EQ(pool.map(square, iota(10)), squares(10));
}

}  // namespace
