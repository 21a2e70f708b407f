// InputFeed alone, without MPI: batches go to a fake pool that answers each item with its own
// argument bytes (at once, or when the test says). Order, exactly once, the input's exception
// at its position, the bounded read-ahead, a stalled input, next(deadline), stop().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "caller/job_state.hpp"
#include "fiber/detail/input_feed.hpp"
#include "fiber/errors.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// Longest a test waits for something that should happen at once.
constexpr auto kPatience = 30s;

struct InputBroke : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The items 0, 1, ..., total - 1, throwing InputBroke instead of item `broken_at`; counts what
// it was asked for.
struct Counting {
  int total;
  int broken_at = -1;
  std::shared_ptr<std::atomic<int>> read = std::make_shared<std::atomic<int>>(0);

  InputFeed::Source source() const {
    return [*this, next = 0](Bytes& out) mutable {
      if (next == total) return false;
      if (next == broken_at) throw InputBroke("the input broke");
      ++*read;
      encode_into(out, next++);
      return true;
    };
  }
};

// Stores every item's result: its argument bytes, in reverse order within the batch.
void answer(const std::shared_ptr<Job>& job) {
  JobState& state = job->state();
  auto arguments = state.arguments(0, job->size());
  auto payload = std::make_shared<const Bytes>(arguments.begin(), arguments.end());
  auto offsets = state.offsets(0, job->size());
  for (std::size_t i = job->size(); i-- > 0;) {
    JobState::ItemResult result{true, offsets[i] - offsets[0], offsets[i + 1] - offsets[i], {}};
    state.store(i, std::span(&result, 1), payload);
  }
}

InputFeed::Shape shape(InputFeed::Order order, std::size_t chunksize = 0) {
  return {"echo", chunksize, std::chrono::milliseconds(0), 2, order, {}};
}

int value_of(const InputFeed::Item& item) { return item.job->decoded_result<int>(item.index); }

std::optional<int> next_value(InputFeed& feed, Clock::duration patience = kPatience) {
  auto item = feed.next(Clock::now() + patience);
  if (!item) return std::nullopt;
  return value_of(*item);
}

TEST(InputFeed, InItemOrderEveryItemOnce) {
  constexpr int kItems = 100'000;
  InputFeed feed(Counting{kItems}.source(), answer, shape(InputFeed::Order::submission));
  for (int i = 0; i < kItems; ++i) ASSERT_EQ(next_value(feed), i);
  EXPECT_EQ(next_value(feed), std::nullopt);
  EXPECT_EQ(next_value(feed), std::nullopt);
  EXPECT_TRUE(feed.finished());
}

TEST(InputFeed, InCompletionOrderEveryItemOnce) {
  constexpr int kItems = 100'000;
  InputFeed feed(Counting{kItems}.source(), answer, shape(InputFeed::Order::completion));
  std::set<int> seen;
  while (auto value = next_value(feed)) ASSERT_TRUE(seen.insert(*value).second) << *value;
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kItems));
}

TEST(InputFeed, InputExceptionAtItsPosition) {
  for (auto order : {InputFeed::Order::submission, InputFeed::Order::completion}) {
    InputFeed feed(Counting{100, 57}.source(), answer, shape(order));
    std::set<int> seen;
    for (int i = 0; i < 57; ++i) seen.insert(*next_value(feed));
    EXPECT_EQ(seen.size(), 57u);
    EXPECT_EQ(*seen.rbegin(), 56);
    EXPECT_THROW(next_value(feed), InputBroke);
    EXPECT_EQ(next_value(feed), std::nullopt);
  }
}

TEST(InputFeed, WithAChunksizeTheBrokenChunkDoesNotRun) {
  InputFeed feed(Counting{100, 57}.source(), answer, shape(InputFeed::Order::submission, 4));
  for (int i = 0; i < 56; ++i) ASSERT_EQ(next_value(feed), i);
  EXPECT_THROW(next_value(feed), InputBroke);
}

// A pool that answers only when told: what it holds, and a way to answer it.
struct HeldPool {
  std::mutex mutex;
  std::deque<std::shared_ptr<Job>> held;

  InputFeed::Submit submit() {
    return [this](const std::shared_ptr<Job>& job) {
      std::lock_guard lock(mutex);
      held.push_back(job);
    };
  }
  void answer_all() {
    std::lock_guard lock(mutex);
    for (auto& job : held) answer(job);
    held.clear();
  }
  // The feed's next item, answering what was submitted until it comes.
  std::optional<InputFeed::Item> take(InputFeed& feed) {
    for (;;) {
      try {
        return feed.next(Clock::now() + 1ms);
      } catch (const TimeoutError&) {
        answer_all();
      }
    }
  }
};

TEST(InputFeed, ReadsOnlyABoundedWayAhead) {
  HeldPool pool;
  Counting input{10'000'000};
  InputFeed feed(input.source(), pool.submit(), shape(InputFeed::Order::completion));
  std::this_thread::sleep_for(100ms);  // time to read far ahead, if it would
  int read_ahead = input.read->load();
  EXPECT_GT(read_ahead, 0);
  EXPECT_LT(read_ahead, 100'000);
  for (int taken = 0; taken < 200'000; ++taken) {
    ASSERT_TRUE(pool.take(feed));
    ASSERT_LT(input.read->load(), taken + 100'000);
  }
}

TEST(InputFeed, NextTimesOutAndCanBeCalledAgain) {
  HeldPool pool;
  InputFeed feed(Counting{3}.source(), pool.submit(), shape(InputFeed::Order::submission));
  EXPECT_THROW(feed.next(Clock::now() + 20ms), TimeoutError);
  EXPECT_THROW(feed.next(Clock::now() + 1ms), TimeoutError);
  pool.answer_all();
  EXPECT_EQ(next_value(feed), 0);
  EXPECT_EQ(next_value(feed), 1);
  EXPECT_EQ(next_value(feed), 2);
  EXPECT_EQ(next_value(feed), std::nullopt);
}

// An input that stalls after a few items: those run meanwhile (the waiting caller submits them).
TEST(InputFeed, AStalledInputHoldsNothingBack) {
  std::mutex mutex;
  std::condition_variable changed;
  bool go_on = false;
  InputFeed::Source stalling = [&, next = 0](Bytes& out) mutable {
    if (next == 3) {
      std::unique_lock lock(mutex);
      changed.wait_for(lock, kPatience, [&] { return go_on; });
    }
    if (next == 6) return false;
    encode_into(out, next++);
    return true;
  };
  InputFeed feed(stalling, answer, shape(InputFeed::Order::submission));
  // (well before the input goes on by itself)
  for (int i = 0; i < 3; ++i) EXPECT_EQ(next_value(feed, kPatience / 4), i);
  {
    std::lock_guard lock(mutex);
    go_on = true;
  }
  changed.notify_all();
  for (int i = 3; i < 6; ++i) EXPECT_EQ(next_value(feed), i);
  EXPECT_EQ(next_value(feed), std::nullopt);
}

TEST(InputFeed, StopEndsTheStreamWithItsReason) {
  HeldPool pool;
  InputFeed feed(Counting{10'000'000}.source(), pool.submit(), shape(InputFeed::Order::submission));
  EXPECT_EQ(value_of(*pool.take(feed)), 0);
  feed.stop(std::make_exception_ptr(PoolClosed("stopped by the test")));
  pool.answer_all();  // what was submitted before the stop still comes
  try {
    while (next_value(feed)) {
    }
    ADD_FAILURE() << "the stream ended without the reason it was stopped";
  } catch (const PoolClosed& error) {
    EXPECT_STREQ(error.what(), "stopped by the test");
  }
  EXPECT_EQ(next_value(feed), std::nullopt);
  EXPECT_TRUE(feed.finished());
}

}  // namespace
}  // namespace fiber::detail
