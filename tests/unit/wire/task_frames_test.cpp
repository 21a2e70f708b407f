// The task frames' format (task_frames.hpp) over a task ring in shared memory, both ways: chunk
// frames down, item records and run times up; and what a reader says when the stream ends early.
#include "wire/task_frames.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/ring_memory.hpp"
#include "wire/codec.hpp"
#include "wire/item_record.hpp"

namespace {

using namespace std::chrono_literals;
using fiber::Bytes;
using fiber::detail::ByteWriter;
using fiber::detail::ItemStatus;
using fiber::detail::task_frames::AnswerReader;
using fiber::detail::task_frames::ChunkReader;
using fiber::detail::task_frames::FrameError;
using fiber::detail::task_frames::kFrameOverhead;
using fiber::unit::SharedRing;

// Large enough to take two writes, small enough for the ring to hold (no reader yet).
constexpr std::size_t kLargeBody = 20000;
constexpr std::size_t kRingBytes = 64 * 1024;

bool never_wait() { return false; }

Bytes bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

// A record of these bytes (the frames do not look into them).
Bytes item_record(const std::string& result, bool ok = true) {
  Bytes record;
  ByteWriter(record).value(ItemStatus{result.size(), ok ? 1u : 0u}).raw(result);
  return record;
}

void write_raw(fiber::detail::task_ring::Ring& ring, const Bytes& data) {
  ASSERT_EQ(ring.write_some(data), data.size());
}

// The FrameError the next read gives.
std::string error_of(ChunkReader& chunks) {
  try {
    chunks.next();
  } catch (const FrameError& error) {
    return error.what();
  }
  return "no error";
}

TEST(TaskFramesDown, ChunkFramesRoundTripThenEndAtEndOfFile) {
  SharedRing down(kRingBytes);
  std::vector<Bytes> bodies{bytes("first chunk"), Bytes(), Bytes(kLargeBody, 'z')};
  for (const auto& body : bodies)
    ASSERT_TRUE(fiber::detail::task_frames::write_chunk(down.ring, body, 0ns, never_wait));
  down.ring.close();
  ChunkReader chunks(down.ring);
  for (const auto& body : bodies) {
    auto read = chunks.next();
    ASSERT_TRUE(read);
    EXPECT_EQ(Bytes(read->begin(), read->end()), body);
  }
  EXPECT_FALSE(chunks.next());
}

TEST(TaskFramesDown, AFrameCutShortSaysWhere) {
  SharedRing down(kRingBytes);
  Bytes frame;
  ByteWriter(frame).value(std::uint64_t{10});
  frame.insert(frame.end(), {'a', 'b', 'c'});
  write_raw(down.ring, frame);
  down.ring.close();
  ChunkReader chunks(down.ring);
  EXPECT_EQ(error_of(chunks), "fiber: the chunk stream ended 3 bytes into a chunk of 10 bytes");
}

TEST(TaskFramesDown, ASizeCutShortSaysSo) {
  SharedRing down(kRingBytes);
  write_raw(down.ring, Bytes(kFrameOverhead - 3, '\0'));
  down.ring.close();
  ChunkReader chunks(down.ring);
  EXPECT_EQ(error_of(chunks), "fiber: the chunk stream ended 5 bytes into a chunk's size");
}

TEST(TaskFramesDown, AChunkLargerThanTheRingWaitsForRoomAndGivesUpWhenTheReaderIsGone) {
  SharedRing down(kFrameOverhead * 4);
  int looks = 0;
  EXPECT_FALSE(fiber::detail::task_frames::write_chunk(down.ring, Bytes(kLargeBody, 'x'), 1ms,
                                                       [&] { return ++looks < 2; }));
  EXPECT_EQ(looks, 2);
}

class TaskFramesUp : public ::testing::Test {
 protected:
  SharedRing up_{kRingBytes};
  AnswerReader answers_;
};

TEST_F(TaskFramesUp, RecordsAndRunTimesRoundTripInOrder) {
  Bytes answer = item_record("six");
  Bytes failed = item_record("error bytes", false);
  answer.insert(answer.end(), failed.begin(), failed.end());
  fiber::detail::task_frames::append_run_time(answer, 1234ns);
  Bytes next = item_record("");
  answer.insert(answer.end(), next.begin(), next.end());
  fiber::detail::task_frames::append_run_time(answer, 5ns);
  fiber::detail::task_frames::write_answer(up_.ring, answer);

  ASSERT_EQ(answers_.read_from(up_.ring), answer.size());
  EXPECT_EQ(answers_.received(), answer.size());
  auto first = answers_.next_record();
  ASSERT_TRUE(first);
  EXPECT_EQ(Bytes(first->begin(), first->end()), item_record("six"));
  auto second = answers_.next_record();
  ASSERT_TRUE(second);
  EXPECT_EQ(Bytes(second->begin(), second->end()), failed);
  EXPECT_EQ(answers_.next_run_time(), 1234ns);
  auto empty = answers_.next_record();
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->size(), sizeof(ItemStatus));
  EXPECT_EQ(answers_.next_run_time(), 5ns);
  EXPECT_FALSE(answers_.next_record());
  EXPECT_FALSE(answers_.next_run_time());
}

TEST_F(TaskFramesUp, APartOfARecordWaitsForTheRest) {
  Bytes record = item_record("a result of some length");
  std::size_t half = sizeof(ItemStatus) + 4;
  write_raw(up_.ring, Bytes(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(half)));
  ASSERT_GT(answers_.read_from(up_.ring), 0u);
  EXPECT_FALSE(answers_.next_record());
  write_raw(up_.ring, Bytes(record.begin() + static_cast<std::ptrdiff_t>(half), record.end()));
  ASSERT_GT(answers_.read_from(up_.ring), 0u);
  auto whole = answers_.next_record();
  ASSERT_TRUE(whole);
  EXPECT_EQ(Bytes(whole->begin(), whole->end()), record);
}

TEST_F(TaskFramesUp, ACutRecordIsKeptBack) {
  Bytes record = item_record("cut");
  record.pop_back();
  write_raw(up_.ring, record);
  EXPECT_EQ(answers_.read_from(up_.ring), record.size());
  EXPECT_EQ(answers_.received(), record.size());
  EXPECT_FALSE(answers_.next_record());
}

TEST_F(TaskFramesUp, NothingWrittenYetIsNothingRead) {
  EXPECT_EQ(answers_.read_from(up_.ring), 0u);
  EXPECT_EQ(answers_.received(), 0u);
  EXPECT_FALSE(answers_.next_run_time());
}

TEST_F(TaskFramesUp, BytesAddedJoinTheOnesReadInOrder) {
  Bytes record = item_record("split across the two");
  std::size_t half = record.size() / 2;
  answers_.add(std::span(record).first(half));
  write_raw(up_.ring, Bytes(record.begin() + static_cast<std::ptrdiff_t>(half), record.end()));
  answers_.read_from(up_.ring);
  auto whole = answers_.next_record();
  ASSERT_TRUE(whole);
  EXPECT_EQ(Bytes(whole->begin(), whole->end()), record);
  EXPECT_EQ(answers_.received(), record.size());
}

TEST_F(TaskFramesUp, ClearForgetsWhatWasNotTaken) {
  Bytes answer = item_record("dropped");
  fiber::detail::task_frames::append_run_time(answer, 1ns);
  write_raw(up_.ring, answer);
  ASSERT_GT(answers_.read_from(up_.ring), 0u);
  answers_.clear();
  EXPECT_FALSE(answers_.next_record());
  EXPECT_FALSE(answers_.next_run_time());
}

}  // namespace
