#include "dispatch/result_reader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

void append_item(Bytes& out, bool ok, const Bytes& bytes) {
  append_raw(out, ItemStatus{bytes.size(), ok ? 1u : 0u});
  out.insert(out.end(), bytes.begin(), bytes.end());
}

Bytes error_bytes(const std::string& type, const std::string& message) {
  Bytes bytes;
  append_string(bytes, type);
  append_string(bytes, message);
  return bytes;
}

TEST(ResultReader, ItemsPointIntoTheMessageAndFailuresBecomeTaskErrors) {
  Bytes message(8, 'x');  // the entry lies 8 bytes into its message
  append_raw(message, ResultHeader{42, 2, ChunkStatus::crashed, 1000, 3, 0});
  append_item(message, true, Bytes{'a', 'b', 'c'});
  append_item(message, false, error_bytes("std::runtime_error", "bad seed"));
  append_string(message, "killed by signal 11");
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
  Bytes message;
  append_raw(message, ResultHeader{1, 1, ChunkStatus::complete, 0, 0, 0});
  append_raw(message, ItemStatus{100, 1});  // 100 bytes announced, none follow
  ResultReader reader(message, 0);
  std::vector<JobState::ItemResult> results;
  EXPECT_THROW(reader.items("t", WorkerInfo{}, results), ProtocolError);
  EXPECT_THROW(ResultReader(std::span<const char>(message).first(4), 0), ProtocolError);
}

}  // namespace
}  // namespace fiber::detail
