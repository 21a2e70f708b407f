// Lazy imap / imap_unordered: the input is read on a feeder a bounded way ahead, an exception the
// input throws comes at its position after the earlier results (CPython's
// test_imap_handle_iterable_exception and test_imap_unordered_handle_iterable_exception,
// ported), an endless range works, and next(timeout) throws fiber::TimeoutError and can be
// called again.
#include <gtest/gtest.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <numeric>
#include <optional>
#include <ranges>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/shared_pool_test.hpp"
#include "support/tasks.hpp"
#include "support/throwing_range.hpp"

namespace {

using fiber_test::square;
using namespace std::chrono_literals;

// Longest a test waits for something that the code under test should make happen at once.
constexpr auto kPatience = 60s;

}  // namespace

// Waits until the file `path` exists (at most kPatience), then returns 1.
int wait_for_file(std::string path) {
  auto give_up = std::chrono::steady_clock::now() + kPatience;
  while (!std::filesystem::exists(path) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(1ms);
  }
  return 1;
}
FIBER_TASK(wait_for_file);

namespace {

using fiber_test::SayWhenError;
using fiber_test::ThrowingRange;

class PoolImap : public fiber_test::SharedPoolTest<PoolImap> {};

TEST_F(PoolImap, HandleIterableException) {  // test_imap_handle_iterable_exception
  // SayWhenError seen at the very first of the iterable
  auto it = pool->imap(square, ThrowingRange(1, -1), 1);
  EXPECT_THROW(it.next(), SayWhenError);
  // again, make sure it's reentrant
  auto again = pool->imap(square, ThrowingRange(1, -1), 1);
  EXPECT_THROW(again.next(), SayWhenError);

  auto three = pool->imap(square, ThrowingRange(10, 3), 1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(three.next(), i * i);
  EXPECT_THROW(three.next(), SayWhenError);

  // SayWhenError seen at start of problematic chunk's results
  auto by_two = pool->imap(square, ThrowingRange(20, 7), 2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(by_two.next(), i * i);
  EXPECT_THROW(by_two.next(), SayWhenError);
  auto by_four = pool->imap(square, ThrowingRange(20, 7), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(by_four.next(), i * i);
  EXPECT_THROW(by_four.next(), SayWhenError);
}

TEST_F(PoolImap, UnorderedHandleIterableException) {  // test_imap_unordered_handle_iterable_...
  // SayWhenError seen at the very first of the iterable
  auto it = pool->imap_unordered(square, ThrowingRange(1, -1), 1);
  EXPECT_THROW(it.next(), SayWhenError);
  // again, make sure it's reentrant
  auto again = pool->imap_unordered(square, ThrowingRange(1, -1), 1);
  EXPECT_THROW(again.next(), SayWhenError);

  for (auto [chunksize, when] : {std::pair{1, 3}, std::pair{2, 7}}) {
    auto stream = pool->imap_unordered(square, ThrowingRange(20, when), chunksize);
    std::multiset<int> expected_values;
    for (int i = 0; i < 20; ++i) expected_values.insert(i * i);
    EXPECT_THROW(
        {
          for (int i = 0; i < 20; ++i) {
            int value = *stream.next();
            ASSERT_EQ(expected_values.count(value), 1u) << value;
            expected_values.erase(expected_values.find(value));
          }
        },
        SayWhenError)
        << "chunksize " << chunksize;
  }
}

// Beyond Python: every item before the failing one has its result first (with automatic chunks,
// and in completion order too), then the input's exception, then the end.
TEST_F(PoolImap, InputExceptionComesAfterEveryEarlierResult) {
  auto ordered = pool->imap(square, ThrowingRange(100, 57));
  for (int i = 0; i < 57; ++i) ASSERT_EQ(ordered.next(), i * i);
  EXPECT_THROW(ordered.next(), SayWhenError);
  EXPECT_EQ(ordered.next(), std::nullopt);

  auto unordered = pool->imap_unordered(square, ThrowingRange(100, 57), 1);
  std::set<int> seen;
  for (int i = 0; i < 57; ++i) seen.insert(*unordered.next());
  EXPECT_EQ(seen.size(), 57u);
  EXPECT_EQ(*seen.rbegin(), 56 * 56);
  EXPECT_THROW(unordered.next(), SayWhenError);
  EXPECT_EQ(unordered.next(), std::nullopt);
}

TEST_F(PoolImap, EndlessInputTakeSomeThenStop) {
  {
    auto stream = pool->imap(square, std::views::iota(0));
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(stream.next(), i * i);
  }  // destroyed with its input still going: the feeder stops
  {
    auto stream = pool->imap_unordered(square, std::views::iota(0), 3);
    std::set<int> seen;
    for (int i = 0; i < 5000; ++i) seen.insert(*stream.next());
    EXPECT_EQ(seen.size(), 5000u);
  }
  EXPECT_EQ(pool->apply(square, 12), 144);  // the pool goes on
}

// A 10-million-item input is read only a bounded way ahead of the results taken.
TEST_F(PoolImap, LookAheadIsBounded) {
  constexpr int kItems = 10'000'000;
  constexpr std::size_t kFarAhead = 100'000;  // far more than the feeder reads ahead
  std::atomic<std::size_t> read{0};
  auto counted = std::views::iota(0, kItems) | std::views::transform([&read](int i) {
                   ++read;
                   return i % 40'000;
                 });
  std::size_t taken = 0;
  {
    auto stream = pool->imap_unordered(square, counted);
    for (; taken < 200'000; ++taken) {
      ASSERT_TRUE(stream.next());
      ASSERT_LT(read.load(), taken + kFarAhead) << "after " << taken << " results";
    }
  }
  std::size_t read_when_destroyed = read.load();
  EXPECT_LT(read_when_destroyed, taken + kFarAhead);
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(read.load(), read_when_destroyed) << "the feeder read on after its stream ended";
}

// The first results come while the input is still being read (it waits here for the first one):
// an eager imap would wait for the whole input first.
TEST_F(PoolImap, WorkOverlapsWithASlowInput) {
  std::mutex mutex;
  std::condition_variable changed;
  bool first_result_taken = false;
  bool input_gave_up = false;
  auto blocking = std::views::iota(0, 10) | std::views::transform([&](int i) {
                    if (i == 3) {
                      std::unique_lock lock(mutex);
                      if (!changed.wait_for(lock, kPatience, [&] { return first_result_taken; })) {
                        input_gave_up = true;
                      }
                    }
                    return i;
                  });
  auto stream = pool->imap(square, blocking);
  EXPECT_EQ(stream.next(), 0);
  {
    std::lock_guard lock(mutex);
    first_result_taken = true;
  }
  changed.notify_all();
  for (int i = 1; i < 10; ++i) EXPECT_EQ(stream.next(), i * i);
  EXPECT_EQ(stream.next(), std::nullopt);
  EXPECT_FALSE(input_gave_up);
}

std::string unique_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string(name) + "." + std::to_string(::getpid())))
      .string();
}

TEST_F(PoolImap, NextWithTimeoutThrowsAndCanBeRetried) {
  for (bool unordered : {false, true}) {
    std::string flag = unique_path(unordered ? "fiber-imap-unordered-flag" : "fiber-imap-flag");
    std::filesystem::remove(flag);
    std::vector<std::string> paths{flag};
    auto stream =
        unordered ? pool->imap_unordered(wait_for_file, paths) : pool->imap(wait_for_file, paths);
    EXPECT_THROW(stream.next(50ms), fiber::TimeoutError);  // the task waits for the flag
    EXPECT_THROW(stream.next(1ms), fiber::TimeoutError);
    std::ofstream(flag).put('1');
    EXPECT_EQ(stream.next(kPatience), 1);
    EXPECT_EQ(stream.next(kPatience), std::nullopt);
    std::filesystem::remove(flag);
  }
}

// next_within: a wait that runs out returns false; an item killed at its deadline throws its
// own fiber::TimeoutError (how fiber._fiber waits in slices and still raises it).
TEST_F(PoolImap, NextWithinTellsAWaitThatRanOutFromAnItemsTimeout) {
  std::string never = unique_path("fiber-imap-never");
  std::filesystem::remove(never);
  std::vector<std::string> paths{never};
  auto stream = pool->imap(fiber::with_timeout(wait_for_file, 300ms), paths);
  std::optional<int> result;
  EXPECT_FALSE(stream.next_within(1ms, result));  // the item runs: nothing yet, stream unchanged
  auto give_up = std::chrono::steady_clock::now() + kPatience;
  bool there = false;
  try {
    while (!there && std::chrono::steady_clock::now() < give_up) {
      there = stream.next_within(100ms, result);
    }
    ADD_FAILURE() << "the item's deadline did not throw";
  } catch (const fiber::TimeoutError& error) {
    EXPECT_NE(std::string(error.what()).find("wait_for_file"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(stream.next_within(kPatience, result));
  EXPECT_EQ(result, std::nullopt);  // the end of the stream
}

TEST(PoolImapLifetime, TerminateEndsAStreamWithPoolClosed) {
  fiber::Pool pool({.processes = 1});
  auto stream = pool.imap(square, std::views::iota(0));
  EXPECT_EQ(stream.next(), 0);
  pool.terminate();
  bool closed = false;
  for (int i = 0; i < 10'000'000 && !closed; ++i) {
    try {
      if (!stream.next()) break;
    } catch (const fiber::PoolClosed&) {
      closed = true;
    }
  }
  EXPECT_TRUE(closed);
}

TEST(PoolImapLifetime, AStreamThatOutlivesItsPoolEndsWithPoolClosed) {
  std::optional<fiber::ResultStream<int>> stream;
  {
    fiber::Pool pool({.processes = 1});
    stream.emplace(pool.imap_unordered(square, std::views::iota(0)));
    EXPECT_TRUE(stream->next());
  }
  bool closed = false;
  for (int i = 0; i < 10'000'000 && !closed; ++i) {
    try {
      if (!stream->next()) break;
    } catch (const fiber::PoolClosed&) {
      closed = true;
    }
  }
  EXPECT_TRUE(closed);
}

TEST(PoolImapLifetime, JoinReadsTheRestOfAnInputNobodyTakes) {
  fiber::Pool pool({.processes = 2});
  std::vector<int> items(50'000);
  std::iota(items.begin(), items.end(), 0);
  for (int& item : items) item %= 40'000;
  auto stream = pool.imap(square, items);
  pool.close();
  pool.join();  // more than the feeder reads ahead: join lets it read on
  std::size_t count = 0;
  while (auto value = stream.next()) {
    ASSERT_EQ(*value, items[count] * items[count]);
    ++count;
  }
  EXPECT_EQ(count, items.size());
}

}  // namespace
