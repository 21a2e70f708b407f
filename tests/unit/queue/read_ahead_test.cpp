// ReadAhead: a process's items taken beyond what its gets asked for, per queue, oldest first;
// what nothing took for the lease comes out to go back to the queue, and all of it at a task's end.
#include "queue/read_ahead.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;
using Clock = ReadAhead::Clock;

QueueAddress queue_number(std::uint64_t id) { return {"node-1", 4000, id, false}; }

std::vector<Bytes> items(std::vector<std::string> texts) {
  std::vector<Bytes> out;
  for (const auto& text : texts) out.emplace_back(text.begin(), text.end());
  return out;
}

TEST(ReadAhead, TakesOldestFirstPerQueue) {
  ReadAhead read_ahead(2ms);
  auto now = Clock::now();
  read_ahead.keep(queue_number(1), items({"a", "b"}), now);
  read_ahead.keep(queue_number(2), items({"x"}), now);
  read_ahead.keep(queue_number(1), items({"c"}), now);
  EXPECT_EQ(read_ahead.size(queue_number(1)), 3u);
  EXPECT_EQ(read_ahead.take(queue_number(1), 2, now), items({"a", "b"}));
  EXPECT_EQ(read_ahead.take(queue_number(1), 5, now), items({"c"}));
  EXPECT_TRUE(read_ahead.take(queue_number(1), 1, now).empty());
  EXPECT_EQ(read_ahead.size(queue_number(2)), 1u);
  EXPECT_FALSE(read_ahead.empty());
}

TEST(ReadAhead, ItemsUntakenForTheLeaseComeOut) {
  ReadAhead read_ahead(2ms);
  auto start = Clock::now();
  read_ahead.keep(queue_number(1), items({"a", "b", "c"}), start);
  read_ahead.keep(queue_number(2), items({"x"}), start);
  EXPECT_EQ(read_ahead.next_expiry(), start + 2ms);
  // Queue 1 is taken from at 1 ms: its lease starts again; queue 2's ends at 2 ms.
  read_ahead.take(queue_number(1), 1, start + 1ms);
  auto expired = read_ahead.expired(start + 2ms);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].queue.id, 2u);
  EXPECT_EQ(expired[0].items, items({"x"}));
  EXPECT_EQ(read_ahead.next_expiry(), start + 3ms);
  expired = read_ahead.expired(start + 3ms);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].items, items({"b", "c"}));
  EXPECT_TRUE(read_ahead.empty());
  EXPECT_FALSE(read_ahead.next_expiry());
}

TEST(ReadAhead, AllEmptiesEveryQueue) {
  ReadAhead read_ahead(2ms);
  auto now = Clock::now();
  read_ahead.keep(queue_number(1), items({"a"}), now);
  read_ahead.keep(queue_number(2), items({"x", "y"}), now);
  auto all = read_ahead.all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].items, items({"a"}));
  EXPECT_EQ(all[1].items, items({"x", "y"}));
  EXPECT_TRUE(read_ahead.empty());
  EXPECT_EQ(read_ahead.size(queue_number(2)), 0u);
}

// The window doubles each time all read-ahead items were taken, up to kReadAheadItems, and falls
// to a quarter when items went back untaken.
TEST(ReadAhead, TheWindowGrowsWhenTakenAndShrinksWhenReturned) {
  ReadAhead read_ahead(2ms);
  auto now = Clock::now();
  EXPECT_EQ(read_ahead.window(queue_number(1)), kFirstReadAhead);
  std::size_t expected = kFirstReadAhead;
  for (int round = 0; round < 10; ++round) {
    read_ahead.keep(queue_number(1), items({"a", "b"}), now);
    read_ahead.take(queue_number(1), 2, now);
    expected = std::min(kReadAheadItems, expected * kReadAheadGrowth);
    EXPECT_EQ(read_ahead.window(queue_number(1)), expected);
  }
  EXPECT_EQ(read_ahead.window(queue_number(1)), kReadAheadItems);
  read_ahead.keep(queue_number(1), items({"a"}), now);
  read_ahead.expired(now + 2ms);
  EXPECT_EQ(read_ahead.window(queue_number(1)), kReadAheadItems / kReadAheadShrink);
  EXPECT_EQ(read_ahead.window(queue_number(2)), kFirstReadAhead);  // each queue its own
}

}  // namespace
}  // namespace fiber::detail
