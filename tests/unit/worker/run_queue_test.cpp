// RunQueue (worker/run_queue.hpp): run entries in order, and a relayed broadcast's stand-in
// filled exactly once, by the relay's copy or by the master's fallback, whichever comes first,
// also when the relay's copy comes before its stand-in.
#include "worker/run_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/run_bodies.hpp"
#include "wire/run_entry.hpp"

namespace fiber::detail {
namespace {

using unit::run_body;

Bytes item_of(std::uint64_t value) {
  Bytes bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

// The master's stand-in under `chunk_id` for the copy that relay chunk `relay_chunk` brings.
Bytes stand_in(std::uint64_t chunk_id, std::uint64_t relay_chunk) {
  return run_body("", {item_of(relay_chunk)},
                  {chunk_id, kRunIsolated | kRunBroadcast | kRunFromRelay});
}

// A broadcast's body as relay chunk `relay_chunk` carries it.
Bytes relayed(std::uint64_t relay_chunk, const std::string& value) {
  return run_body("set_value", {Bytes(value.begin(), value.end())},
                  {relay_chunk, kRunIsolated | kRunBroadcast});
}

// The master's own copy for stand-in `chunk_id`, sent because the relay was lost.
Bytes fallback(std::uint64_t chunk_id, const std::string& value) {
  return run_body("set_value", {Bytes(value.begin(), value.end())},
                  {chunk_id, kRunIsolated | kRunBroadcast | kRunRelayFallback});
}

std::string item_text(const Bytes& entry) {
  auto item = RunBody(entry).item(0);
  return std::string(item.begin(), item.end());
}

TEST(RunQueue, EntriesComeOutInTheOrderTheyCame) {
  RunQueue queue;
  queue.add_from_master(run_body("t", {item_of(1)}, {7}));
  queue.add(run_body("t", {item_of(2)}, {8}));
  ASSERT_FALSE(queue.empty());
  EXPECT_EQ(RunBody(queue.pop_front()).header().chunk_id, 7u);
  EXPECT_EQ(RunBody(queue.pop_front()).header().chunk_id, 8u);
  EXPECT_TRUE(queue.empty());
}

TEST(RunQueue, ARelaysCopyFillsItsStandInUnderTheStandInsChunkId) {
  RunQueue queue;
  queue.add_from_master(stand_in(/*chunk_id=*/40, /*relay_chunk=*/3));
  EXPECT_TRUE(RunBody(queue.front()).header().flags & kRunFromRelay);
  queue.add_relayed(relayed(3, "weights"));
  RunBody filled(queue.front());
  EXPECT_EQ(filled.header().chunk_id, 40u);
  EXPECT_FALSE(filled.header().flags & kRunFromRelay);
  EXPECT_TRUE(filled.header().flags & kRunBroadcast);
  EXPECT_EQ(filled.task(), "set_value");
  EXPECT_EQ(item_text(queue.front()), "weights");
}

TEST(RunQueue, ACopyThatCameBeforeItsStandInFillsItOnArrival) {
  RunQueue queue;
  queue.add_relayed(relayed(3, "early"));
  EXPECT_TRUE(queue.empty());
  queue.add_from_master(stand_in(41, 3));
  EXPECT_FALSE(RunBody(queue.front()).header().flags & kRunFromRelay);
  EXPECT_EQ(item_text(queue.front()), "early");
}

TEST(RunQueue, TheMastersFallbackFillsAStandInWhoseRelayWasLostAndKeepsItsPlace) {
  RunQueue queue;
  queue.add_from_master(run_body("t", {item_of(1)}, {10}));
  queue.add_from_master(stand_in(42, 3));
  queue.add_from_master(run_body("t", {item_of(2)}, {11}));
  queue.add_from_master(fallback(42, "from the master"));
  queue.pop_front();
  RunBody filled(queue.front());
  EXPECT_EQ(filled.header().chunk_id, 42u);
  EXPECT_FALSE(filled.header().flags & (kRunFromRelay | kRunRelayFallback));
  EXPECT_EQ(item_text(queue.front()), "from the master");
  queue.pop_front();
  EXPECT_EQ(RunBody(queue.pop_front()).header().chunk_id, 11u);
}

// What a stand-in holds once both its copies came, the relay's first or the master's first; and
// whether anything else was left queued.
std::string filled_by_both(bool relay_first, bool& more_queued) {
  RunQueue queue;
  queue.add_from_master(stand_in(43, 3));
  if (relay_first) queue.add_relayed(relayed(3, "relay"));
  queue.add_from_master(fallback(43, "master"));
  if (!relay_first) queue.add_relayed(relayed(3, "relay"));
  std::string body = item_text(queue.pop_front());
  more_queued = !queue.empty();
  return body;
}

TEST(RunQueue, WhicheverCopyComesSecondIsDropped) {
  bool more_queued = true;
  EXPECT_EQ(filled_by_both(/*relay_first=*/true, more_queued), "relay");
  EXPECT_FALSE(more_queued);
  more_queued = true;
  EXPECT_EQ(filled_by_both(/*relay_first=*/false, more_queued), "master");
  EXPECT_FALSE(more_queued);
}

TEST(RunQueue, OnlyTheLatestEarlyCopiesAreKept) {
  RunQueue queue;
  for (std::uint64_t relay_chunk = 1; relay_chunk <= RunQueue::kMaxEarlyRelayed + 1;
       ++relay_chunk) {
    queue.add_relayed(relayed(relay_chunk, "copy " + std::to_string(relay_chunk)));
  }
  queue.add_from_master(stand_in(50, 1));  // its copy was the oldest: dropped
  queue.add_from_master(stand_in(51, RunQueue::kMaxEarlyRelayed + 1));
  EXPECT_TRUE(RunBody(queue.pop_front()).header().flags & kRunFromRelay);
  EXPECT_EQ(item_text(queue.pop_front()), "copy " + std::to_string(RunQueue::kMaxEarlyRelayed + 1));
}

TEST(RunQueue, TakeAllEmptiesTheQueueInOrder) {
  RunQueue queue;
  queue.add_from_master(run_body("t", {item_of(1)}, {20}));
  queue.add_from_master(stand_in(21, 3));
  auto all = queue.take_all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(RunBody(all[0]).header().chunk_id, 20u);
  EXPECT_EQ(RunBody(all[1]).header().chunk_id, 21u);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace fiber::detail
