// The list bodies of run and result messages (entry_list.hpp): entries round trip through
// for_each_entry, a Batch keeps its entries in order and is full at kBatchBytes, and a list cut
// short throws ProtocolError.
#include "wire/entry_list.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fiber::detail {
namespace {

constexpr std::size_t kEntryOverhead = sizeof(std::uint64_t);

Bytes list_of(const std::vector<std::string>& entries) {
  Bytes list;
  for (const auto& entry : entries) append_entry(list, entry);
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

TEST(ProtocolLists, AnEntryIsItsU64SizeThenItsBytes) {
  Bytes list;
  append_entry(list, std::string("abc"));
  Bytes expected = entry_size_prefix(3);
  EXPECT_EQ(expected.size(), kEntryOverhead);
  expected.insert(expected.end(), {'a', 'b', 'c'});
  EXPECT_EQ(list, expected);
}

TEST(ProtocolLists, ABatchTakesARunEntryWholeFromItsParts) {
  const std::vector<std::uint64_t> offsets{0, 2};
  const std::string items = "xy";
  RunEntryParts parts{{5, 0, 0, 0, 0}, "task", offsets, items};
  Batch batch(MessageKind::run);
  batch.add(parts);
  Bytes whole;
  parts.append_to(whole);
  std::vector<Bytes> entries;
  for_each_entry(batch.bytes(), [&](std::span<const char> entry) {
    entries.emplace_back(entry.begin(), entry.end());
  });
  EXPECT_EQ(entries, std::vector<Bytes>{whole});
}

}  // namespace
}  // namespace fiber::detail
