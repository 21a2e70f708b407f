// Result entries (wire/result_entry.hpp): what a writer writes, header last, a ResultEntryReader
// reads back, records and reason; an entry cut short anywhere, or going on past its end, is
// refused.
#include "wire/result_entry.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// A crashed chunk's entry: one result, one failed item, then the reason.
Bytes crashed_entry() {
  Bytes entry = begin_result_entry();
  ItemRecordWriter ok(entry);
  ByteWriter(entry).raw(std::string("abc"));
  ok.finish();
  ItemRecordWriter failed(entry);
  failed.fail("std::runtime_error", "bad seed");
  failed.finish();
  finish_result_entry(entry, result_header(42, 2, ChunkStatus::crashed, 3us, 3),
                      "killed by signal 11");
  return entry;
}

// Reads all of `entry` as the dispatcher does: the header, its records, the reason if it has one.
void read_all(std::span<const char> entry) {
  ResultEntryReader reader(entry);
  for (std::uint32_t i = 0; i < reader.header().count; ++i) reader.next_item();
  if (has_reason(reader.header().status)) reader.reason();
}

TEST(ResultEntry, ReadsBackTheHeaderRecordsAndReason) {
  Bytes entry = crashed_entry();
  ResultEntryReader reader(entry);
  EXPECT_EQ(reader.header().chunk_id, 42u);
  EXPECT_EQ(reader.header().count, 2u);
  EXPECT_EQ(reader.header().status, ChunkStatus::crashed);
  EXPECT_EQ(reader.header().elapsed_ns, 3000u);
  EXPECT_EQ(reader.header().failed_item, 3u);
  auto first = reader.next_item();
  EXPECT_TRUE(first.ok);
  EXPECT_EQ(std::string(first.bytes.begin(), first.bytes.end()), "abc");
  auto second = reader.next_item();
  EXPECT_FALSE(second.ok);
  EXPECT_EQ(ItemError::decode(second.bytes).message, "bad seed");
  EXPECT_EQ(reader.reason(), "killed by signal 11");
}

TEST(ResultEntry, OnlyACrashOrATimeoutWritesItsReason) {
  EXPECT_TRUE(has_reason(ChunkStatus::crashed));
  EXPECT_TRUE(has_reason(ChunkStatus::timed_out));
  EXPECT_FALSE(has_reason(ChunkStatus::complete));
  Bytes entry = begin_result_entry();
  finish_result_entry(entry, result_header(1, 0, ChunkStatus::complete, {}), "not written");
  EXPECT_EQ(entry.size(), sizeof(ResultHeader));
  EXPECT_NO_THROW(read_all(entry));
}

TEST(ResultEntry, AnItemlessResultIsItsHeaderAlone) {
  Bytes entry = itemless_result(8, ChunkStatus::cancelled);
  ResultEntryReader reader(entry);
  EXPECT_EQ(reader.header().chunk_id, 8u);
  EXPECT_EQ(reader.header().count, 0u);
  EXPECT_EQ(reader.header().status, ChunkStatus::cancelled);
  EXPECT_EQ(reader.header().elapsed_ns, 0u);
  EXPECT_EQ(entry.size(), sizeof(ResultHeader));
}

TEST(ResultEntry, EveryPrefixOfAnEntryIsRefusedAsCutShort) {
  for (const Bytes& entry : {crashed_entry(), itemless_result(8, ChunkStatus::not_run)}) {
    for (std::size_t size = 0; size < entry.size(); ++size) {
      try {
        read_all(std::span<const char>(entry).first(size));
        FAIL() << "prefix of " << size << " read";
      } catch (const ProtocolError& error) {
        EXPECT_STREQ(error.what(), "fiber: a result entry was cut short") << "prefix of " << size;
      }
    }
  }
}

TEST(ResultEntry, AnEntryGoingOnPastItsEndIsRefused) {
  for (Bytes entry : {crashed_entry(), itemless_result(8, ChunkStatus::not_run)}) {
    entry.push_back('!');
    try {
      read_all(entry);
      FAIL() << "read with a byte too many";
    } catch (const ProtocolError& error) {
      EXPECT_STREQ(error.what(), "fiber: a result entry has 1 byte past its end");
    }
  }
}

}  // namespace
}  // namespace fiber::detail
