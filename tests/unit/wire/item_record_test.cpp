// Item records (wire/item_record.hpp): a writer's record reads back as written, a failed one in
// place of what the item appended; an item's error refuses bytes cut short or too long.
#include "wire/item_record.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fiber::detail {
namespace {

TEST(ItemRecord, RecordsReadBackInOrderWithTheirBytes) {
  Bytes out{'p', 'r', 'e'};  // records go after what the buffer holds
  ItemRecordWriter first(out);
  ByteWriter(out).raw(std::string("result"));
  first.finish();
  ItemRecordWriter empty(out);
  empty.finish();
  ByteReader reader(std::span<const char>(out).subspan(3), "the test's records");
  auto one = read_item_record(reader);
  EXPECT_TRUE(one.ok);
  EXPECT_EQ(std::string(one.bytes.begin(), one.bytes.end()), "result");
  auto two = read_item_record(reader);
  EXPECT_TRUE(two.ok);
  EXPECT_TRUE(two.bytes.empty());
  EXPECT_TRUE(reader.at_end());
}

TEST(ItemRecord, AFailedItemsErrorReplacesWhatItAppended) {
  Bytes out;
  ItemRecordWriter record(out);
  ByteWriter(out).raw(std::string("half a result"));
  record.fail("std::runtime_error", "bad seed");
  record.finish();
  ByteReader reader(out, "the test's records");
  auto failed = read_item_record(reader);
  EXPECT_FALSE(failed.ok);
  auto error = ItemError::decode(failed.bytes);
  EXPECT_EQ(error.type, "std::runtime_error");
  EXPECT_EQ(error.message, "bad seed");
  EXPECT_TRUE(reader.at_end());
}

TEST(ItemRecord, ARecordCutShortIsRefused) {
  Bytes out;
  ItemRecordWriter record(out);
  ByteWriter(out).raw(std::string("abc"));
  record.finish();
  for (std::size_t size = 0; size < out.size(); ++size) {
    ByteReader reader(std::span<const char>(out).first(size), "the test's records");
    EXPECT_THROW(read_item_record(reader), ProtocolError) << "prefix of " << size;
  }
}

TEST(ItemRecord, AnErrorCutShortOrTooLongIsRefused) {
  Bytes out;
  ItemRecordWriter record(out);
  record.fail("type", "message");
  record.finish();
  ByteReader reader(out, "the test's records");
  auto recorded = read_item_record(reader).bytes;
  Bytes error_bytes(recorded.begin(), recorded.end());
  for (std::size_t size = 0; size < error_bytes.size(); ++size) {
    try {
      ItemError::decode(std::span<const char>(error_bytes).first(size));
      FAIL() << "prefix of " << size << " decoded";
    } catch (const ProtocolError& error) {
      EXPECT_STREQ(error.what(), "fiber: an item's error was cut short");
    }
  }
  error_bytes.push_back('!');
  EXPECT_THROW(ItemError::decode(error_bytes), ProtocolError);
}

}  // namespace
}  // namespace fiber::detail
