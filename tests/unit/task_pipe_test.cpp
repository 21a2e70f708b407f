// The task pipe's format (task_pipe.hpp) over a real pipe(2), both ways: chunk frames down,
// item records and run times up; and what a reader says when the pipe ends early.
#include "task_pipe.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "posix/unique_fd.hpp"

namespace {

using namespace std::chrono_literals;
using fiber::Bytes;
using fiber::detail::ItemStatus;
using fiber::detail::task_pipe::AnswerReader;
using fiber::detail::task_pipe::ChunkReader;
using fiber::detail::task_pipe::kFrameOverhead;
using fiber::detail::task_pipe::PipeError;
using fiber::posix::Pipe;

// Large enough to take two writes, small enough for the pipe to hold (no reader yet).
constexpr std::size_t kLargeBody = 20000;

Pipe make_pipe() {
  auto pipe = fiber::posix::open_pipe(O_CLOEXEC);
  if (!pipe) throw std::runtime_error("pipe2 failed");
  return std::move(*pipe);
}

Bytes bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

Bytes item_record(const std::string& result, bool ok = true) {
  ItemStatus status{result.size(), ok ? 1u : 0u};
  // Sized first and filled in place (growing it part by part trips gcc 12's -Warray-bounds).
  Bytes record(sizeof status + result.size());
  std::memcpy(record.data(), &status, sizeof status);
  std::memcpy(record.data() + sizeof status, result.data(), result.size());
  return record;
}

void write_raw(const fiber::posix::UniqueFd& fd, const Bytes& data) {
  ASSERT_EQ(::write(fd.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
}

// The PipeError the next read gives.
std::string error_of(ChunkReader& chunks) {
  try {
    chunks.next();
  } catch (const PipeError& error) {
    return error.what();
  }
  return "no error";
}

TEST(TaskPipeDown, ChunkFramesRoundTripThenEndAtEndOfFile) {
  Pipe pipe = make_pipe();
  std::vector<Bytes> bodies{bytes("first chunk"), Bytes(), Bytes(kLargeBody, 'z')};
  for (const auto& body : bodies)
    ASSERT_TRUE(fiber::detail::task_pipe::write_chunk(pipe.write.get(), body));
  pipe.write.reset();
  ChunkReader chunks(pipe.read.get());
  for (const auto& body : bodies) {
    auto read = chunks.next();
    ASSERT_TRUE(read);
    EXPECT_EQ(Bytes(read->begin(), read->end()), body);
  }
  EXPECT_FALSE(chunks.next());
}

TEST(TaskPipeDown, AFrameCutShortSaysWhere) {
  Pipe pipe = make_pipe();
  Bytes frame;
  fiber::detail::append_raw(frame, std::uint64_t{10});
  frame.insert(frame.end(), {'a', 'b', 'c'});
  write_raw(pipe.write, frame);
  pipe.write.reset();
  ChunkReader chunks(pipe.read.get());
  EXPECT_EQ(error_of(chunks), "fiber: the task pipe ended 3 bytes into a chunk of 10 bytes");
}

TEST(TaskPipeDown, ASizeCutShortSaysSo) {
  Pipe pipe = make_pipe();
  write_raw(pipe.write, Bytes(kFrameOverhead - 3, '\0'));
  pipe.write.reset();
  ChunkReader chunks(pipe.read.get());
  EXPECT_EQ(error_of(chunks), "fiber: the task pipe ended 5 bytes into a chunk's size");
}

TEST(TaskPipeDown, AWriteToAPipeWithoutReaderFails) {
  Pipe pipe = make_pipe();
  pipe.read.reset();
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  EXPECT_FALSE(fiber::detail::task_pipe::write_chunk(pipe.write.get(), bytes("lost")));
  sigaction(SIGPIPE, &previous, nullptr);
}

class TaskPipeUp : public ::testing::Test {
 protected:
  void SetUp() override { fcntl(pipe_.read.get(), F_SETFL, O_NONBLOCK); }
  Pipe pipe_ = make_pipe();
  AnswerReader answers_;
};

TEST_F(TaskPipeUp, RecordsAndRunTimesRoundTripInOrder) {
  Bytes answer = item_record("six");
  Bytes failed = item_record("error bytes", false);
  answer.insert(answer.end(), failed.begin(), failed.end());
  fiber::detail::task_pipe::append_run_time(answer, 1234ns);
  Bytes next = item_record("");
  answer.insert(answer.end(), next.begin(), next.end());
  fiber::detail::task_pipe::append_run_time(answer, 5ns);
  ASSERT_TRUE(fiber::detail::task_pipe::write_answer(pipe_.write.get(), answer));

  ASSERT_TRUE(answers_.read_from(pipe_.read.get()));
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

TEST_F(TaskPipeUp, APartOfARecordWaitsForTheRest) {
  Bytes record = item_record("a result of some length");
  std::size_t half = sizeof(ItemStatus) + 4;
  write_raw(pipe_.write, Bytes(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(half)));
  ASSERT_TRUE(answers_.read_from(pipe_.read.get()));
  EXPECT_FALSE(answers_.next_record());
  write_raw(pipe_.write, Bytes(record.begin() + static_cast<std::ptrdiff_t>(half), record.end()));
  ASSERT_TRUE(answers_.read_from(pipe_.read.get()));
  auto whole = answers_.next_record();
  ASSERT_TRUE(whole);
  EXPECT_EQ(Bytes(whole->begin(), whole->end()), record);
}

TEST_F(TaskPipeUp, EndOfFileSaysTheWriterIsGoneAndKeepsACutRecordBack) {
  Bytes record = item_record("cut");
  record.pop_back();
  write_raw(pipe_.write, record);
  pipe_.write.reset();
  EXPECT_FALSE(answers_.read_from(pipe_.read.get()));
  EXPECT_EQ(answers_.received(), record.size());
  EXPECT_FALSE(answers_.next_record());
}

TEST_F(TaskPipeUp, NothingWrittenYetIsNotAnEnd) {
  EXPECT_TRUE(answers_.read_from(pipe_.read.get()));
  EXPECT_EQ(answers_.received(), 0u);
  EXPECT_FALSE(answers_.next_run_time());
}

TEST_F(TaskPipeUp, ClearForgetsWhatWasNotTaken) {
  Bytes answer = item_record("dropped");
  fiber::detail::task_pipe::append_run_time(answer, 1ns);
  write_raw(pipe_.write, answer);
  ASSERT_TRUE(answers_.read_from(pipe_.read.get()));
  answers_.clear();
  EXPECT_FALSE(answers_.next_record());
  EXPECT_FALSE(answers_.next_run_time());
}

}  // namespace
