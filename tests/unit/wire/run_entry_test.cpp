// Run entries (wire/run_entry.hpp): RunEntryParts writes one, whole or as a head and its items;
// RunBody reads it in place and refuses one cut short, one too long, and items whose offsets do
// not add up; a stand-in carries its relay's chunk id, and with_header puts a relay's copy under
// a stand-in's header.
#include "wire/run_entry.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fiber/task.hpp"
#include "support/run_bodies.hpp"
#include "wire/codec.hpp"

namespace fiber::detail {
namespace {

std::string run_entry_greet(std::string name) { return "hello " + name; }
FIBER_TASK(run_entry_greet);

Bytes argument(const std::string& text) { return fiber::call(run_entry_greet, text).arguments; }

// The message of the ProtocolError that reading `entry` throws ("no error" if none).
std::string refusal_of(std::span<const char> entry) {
  try {
    RunBody run(entry);
    for (std::uint32_t i = 0; i < run.count(); ++i) run.item(i);
  } catch (const ProtocolError& error) {
    return error.what();
  }
  return "no error";
}

TEST(RunBody, ReadsTheHeaderTaskAndItemsInPlace) {
  Bytes body = fiber::unit::run_body("greet", {argument("a"), Bytes(), argument("bcd")},
                                     {.chunk_id = 9, .flags = 0, .timeout_ms = 250});
  RunBody run(body);
  EXPECT_EQ(run.header().chunk_id, 9u);
  EXPECT_EQ(run.header().timeout_ms, 250u);
  EXPECT_EQ(run.header().flags, 0u);
  EXPECT_EQ(run.task(), "greet");
  ASSERT_EQ(run.count(), 3u);
  EXPECT_EQ(Bytes(run.item(0).begin(), run.item(0).end()), argument("a"));
  EXPECT_TRUE(run.item(1).empty());
  EXPECT_EQ(Bytes(run.item(2).begin(), run.item(2).end()), argument("bcd"));
  EXPECT_EQ(run.item(2).data() + run.item(2).size(), body.data() + body.size());
}

TEST(RunBody, EveryPrefixOfAnEntryIsRefusedAsCutShort) {
  Bytes body = fiber::unit::run_body("greet", {argument("a"), argument("bc")});
  for (std::size_t size = 0; size < body.size(); ++size) {
    EXPECT_EQ(refusal_of(std::span<const char>(body).first(size)),
              "fiber: a run entry was cut short")
        << "prefix of " << size;
  }
  EXPECT_EQ(refusal_of(body), "no error");
}

TEST(RunBody, AnEntryLongerThanItsLastOffsetIsRefusedNamedAsAsked) {
  Bytes body = fiber::unit::run_body("greet", {argument("a")});
  body.push_back('!');
  EXPECT_EQ(refusal_of(body), "fiber: a run entry has 1 byte past its end");
  try {
    RunBody(body, "a replay message's run entry");
    FAIL() << "no error";
  } catch (const ProtocolError& error) {
    EXPECT_STREQ(error.what(), "fiber: a replay message's run entry has 1 byte past its end");
  }
}

TEST(RunBody, ItemOffsetsThatGoBackwardsAreRefused) {
  const std::vector<std::uint64_t> offsets{0, 4, 2, 4};
  const std::string items = "abcd";
  Bytes body;
  RunEntryParts{{1, 0, 0, 0, 0}, "t", offsets, items}.append_to(body);
  RunBody run(body);  // the last offset is the entry's end
  EXPECT_NO_THROW(run.item(0));
  EXPECT_EQ(refusal_of(body), "fiber: a run entry's item offsets do not add up");
}

TEST(RunEntryParts, WritesTheHeaderWithItsTasksNameSizeAndItsOffsetsCount) {
  const std::vector<std::uint64_t> offsets{0, 2, 3};
  const std::string items = "xyz";
  RunEntryParts parts{{7, 999, 999, 4, 30, 2, 125}, "task", offsets, items};
  Bytes whole;
  parts.append_to(whole);
  EXPECT_EQ(whole.size(), parts.size());
  RunBody run(whole);
  EXPECT_EQ(run.header().chunk_id, 7u);
  EXPECT_EQ(run.header().name_size, 4u);
  EXPECT_EQ(run.header().count, 2u);
  EXPECT_EQ(run.header().flags, 4u);
  EXPECT_EQ(run.header().timeout_ms, 30u);
  EXPECT_EQ(run.header().tasks_per_process, 2u);
  EXPECT_EQ(run.header().heartbeat_ms, 125u);
  EXPECT_EQ(run.task(), "task");
  EXPECT_EQ(std::string(run.item(0).begin(), run.item(0).end()), "xy");
  EXPECT_EQ(std::string(run.item(1).begin(), run.item(1).end()), "z");
}

TEST(RunEntryParts, TheHeadThenTheItemsIsTheWholeEntry) {
  const std::vector<std::uint64_t> offsets{0, 3};
  const std::string items = "abc";
  RunEntryParts parts{{1, 0, 0, 0, 0}, "task", offsets, items};
  Bytes whole;
  parts.append_to(whole);
  Bytes split = parts.head();
  split.insert(split.end(), items.begin(), items.end());
  EXPECT_EQ(split, whole);
}

TEST(StandIn, CarriesItsRelaysChunkIdAsItsOneItem) {
  RunHeader header{21, 0, 0, kRunBroadcast | kRunFromRelay, 0};
  Bytes stand_in = stand_in_entry(header, 17);
  RunBody run(stand_in);
  EXPECT_EQ(run.header().chunk_id, 21u);
  EXPECT_EQ(run.header().flags, header.flags);
  EXPECT_EQ(run.task(), "");
  EXPECT_EQ(run.count(), 1u);
  EXPECT_EQ(run.relay_chunk(), 17u);
}

TEST(StandIn, ARelaysCopyUnderItsHeaderKeepsItsOwnTaskAndItems) {
  Bytes copy = fiber::unit::run_body("greet", {argument("a"), argument("b")}, {.chunk_id = 3});
  RunHeader stand_in{40, 0, 1, kRunBroadcast, 500, 0, 250};
  Bytes filled = with_header(copy, stand_in);
  RunBody run(filled);
  EXPECT_EQ(run.header().chunk_id, 40u);
  EXPECT_EQ(run.header().flags, kRunBroadcast);
  EXPECT_EQ(run.header().timeout_ms, 500u);
  EXPECT_EQ(run.header().heartbeat_ms, 250u);
  EXPECT_EQ(run.task(), "greet");
  ASSERT_EQ(run.count(), 2u);
  EXPECT_EQ(Bytes(run.item(1).begin(), run.item(1).end()), argument("b"));
}

}  // namespace
}  // namespace fiber::detail
