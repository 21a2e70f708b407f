// The protocol's list bodies and readers (protocol.hpp): entries round trip through
// for_each_entry, a Batch keeps its entries in order and is full at kBatchBytes, and cut-short
// bytes throw ProtocolError.
#include "wire/protocol.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using fiber::Bytes;
using fiber::detail::append_raw;
using fiber::detail::append_string;
using fiber::detail::Batch;
using fiber::detail::BodyReader;
using fiber::detail::for_each_entry;
using fiber::detail::kBatchBytes;
using fiber::detail::MessageKind;
using fiber::detail::ProtocolError;

constexpr std::size_t kEntryOverhead = sizeof(std::uint64_t);

Bytes list_of(const std::vector<std::string>& entries) {
  Bytes list;
  for (const auto& entry : entries) {
    append_raw(list, static_cast<std::uint64_t>(entry.size()));
    list.insert(list.end(), entry.begin(), entry.end());
  }
  return list;
}

std::vector<std::string> entries_of(const Bytes& list) {
  std::vector<std::string> entries;
  for_each_entry(
      list, [&](std::span<const char> entry) { entries.emplace_back(entry.begin(), entry.end()); });
  return entries;
}

TEST(ProtocolLists, EntriesRoundTripEmptyOnesIncluded) {
  std::vector<std::string> entries{"first", "", std::string(70000, 'x'), "last"};
  EXPECT_EQ(entries_of(list_of(entries)), entries);
  EXPECT_TRUE(entries_of(Bytes()).empty());
}

TEST(ProtocolLists, AListCutShortThrows) {
  Bytes list = list_of({"one", "two"});
  for (std::size_t cut : {std::size_t{1}, std::size_t{4}, kEntryOverhead + 1}) {
    Bytes short_list(list.begin(), list.end() - static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(entries_of(short_list), ProtocolError) << "cut by " << cut;
  }
}

TEST(ProtocolLists, ACutShortListSaysSo) {
  Bytes list = list_of({"one"});
  list.pop_back();
  try {
    entries_of(list);
    FAIL() << "no error";
  } catch (const ProtocolError& error) {
    EXPECT_STREQ(error.what(), "fiber: a protocol list was cut short");
  }
}

// A batch holding `bytes` bytes: one entry of two parts (8 bytes of size, then the parts).
Batch batch_of(std::size_t bytes) {
  Batch batch(MessageKind::result);
  std::string entry(bytes - kEntryOverhead, 'a');
  batch.add({std::span<const char>(entry).first(1), std::span<const char>(entry).subspan(1)});
  return batch;
}

TEST(ProtocolLists, ABatchIsFullOnceItHoldsBatchBytes) {
  Batch batch(MessageKind::result);
  EXPECT_TRUE(batch.empty());
  EXPECT_FALSE(batch.full());
  EXPECT_FALSE(batch_of(kBatchBytes - 1).full());
  EXPECT_FALSE(batch_of(kBatchBytes - 1).empty());
  EXPECT_TRUE(batch_of(kBatchBytes).full());
  Batch grown = batch_of(kBatchBytes - kEntryOverhead);
  EXPECT_FALSE(grown.full());
  grown.add({});  // an empty entry: its size alone
  EXPECT_TRUE(grown.full());
}

TEST(ProtocolLists, ABatchsEntriesComeBackInOrderEachItsPartsJoined) {
  Batch batch(MessageKind::run);
  std::string header = "hd", body = "payload", lone = "x";
  batch.add({std::span<const char>(header), std::span<const char>(body)});
  batch.add({std::span<const char>(lone)});
  batch.add({});
  std::vector<std::string> entries;
  for_each_entry(batch.bytes(), [&](std::span<const char> entry) {
    entries.emplace_back(entry.begin(), entry.end());
  });
  EXPECT_EQ(entries, (std::vector<std::string>{"hdpayload", "x", ""}));
}

TEST(BodyReader, ReadsValuesAndStringsInOrder) {
  Bytes body;
  append_raw(body, std::int32_t{-7});
  append_string(body, "run-identity");
  append_raw(body, std::uint64_t{1} << 40);
  BodyReader reader(body);
  EXPECT_EQ(reader.raw<std::int32_t>(), -7);
  EXPECT_EQ(reader.string(), "run-identity");
  EXPECT_EQ(reader.raw<std::uint64_t>(), std::uint64_t{1} << 40);
  EXPECT_EQ(reader.position(), body.size());
  EXPECT_TRUE(reader.take(0).empty());
}

TEST(BodyReader, AShortBodyThrows) {
  Bytes body;
  append_string(body, "text");
  body.pop_back();  // the string's last byte
  BodyReader reader(body);
  EXPECT_THROW(reader.string(), ProtocolError);
  BodyReader empty(std::span<const char>{});
  EXPECT_THROW(empty.raw<std::uint32_t>(), ProtocolError);
  BodyReader past_end(body);
  past_end.take(body.size());
  EXPECT_THROW(past_end.take(1), ProtocolError);
}

}  // namespace
