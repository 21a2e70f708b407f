#include "dispatch/result_reader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "fiber/errors.hpp"
#include "wire/codec.hpp"
#include "wire/item_record.hpp"
#include "wire/result_entry.hpp"

namespace fiber::detail {
namespace {

// A crashed chunk's entry, `offset` bytes into its message: a result, a failed item, a reason.
Bytes crashed_message(std::size_t offset) {
  Bytes entry = begin_result_entry();
  ItemRecordWriter ok(entry);
  ByteWriter(entry).raw(Bytes{'a', 'b', 'c'});
  ok.finish();
  ItemRecordWriter failed(entry);
  failed.fail("std::runtime_error", "bad seed");
  failed.finish();
  finish_result_entry(entry, ResultHeader{42, 2, ChunkStatus::crashed, 1000, 3, 0},
                      "killed by signal 11");
  Bytes message(offset, 'x');
  message.insert(message.end(), entry.begin(), entry.end());
  return message;
}

TEST(ResultReader, ItemsPointIntoTheMessageAndFailuresBecomeTaskErrors) {
  Bytes message = crashed_message(8);  // the entry lies 8 bytes into its message
  std::span<const char> entry = std::span<const char>(message).subspan(8);

  ResultReader reader(entry, 8);
  EXPECT_EQ(reader.header().chunk_id, 42u);
  EXPECT_EQ(reader.header().failed_item, 3u);
  std::vector<JobState::ItemResult> results;
  WorkerInfo worker{3, "node7", 1234};
  EXPECT_EQ(reader.items("rollout", worker, results), 1u);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_EQ(std::string(message.data() + results[0].offset, results[0].size), "abc");
  EXPECT_FALSE(results[1].ok);
  try {
    std::rethrow_exception(results[1].error);
    FAIL() << "a failed item without its error";
  } catch (const TaskError& error) {
    EXPECT_EQ(error.task(), "rollout");
    EXPECT_EQ(error.type(), "std::runtime_error");
    EXPECT_EQ(error.message(), "bad seed");
    EXPECT_EQ(error.worker().host, "node7");
  }
  EXPECT_EQ(reader.reason(), "killed by signal 11");
}

TEST(ResultReader, AnEntryCutShortIsAProtocolError) {
  Bytes message = crashed_message(0);
  std::size_t in_the_records = sizeof(ResultHeader) + sizeof(ItemStatus) + 1;
  ResultReader reader(std::span<const char>(message).first(in_the_records), 0);
  std::vector<JobState::ItemResult> results;
  EXPECT_THROW(reader.items("t", WorkerInfo{}, results), ProtocolError);
  EXPECT_THROW(ResultReader(std::span<const char>(message).first(4), 0), ProtocolError);
}

}  // namespace
}  // namespace fiber::detail
