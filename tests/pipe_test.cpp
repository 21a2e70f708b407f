// fiber::Pipe, as Python's multiprocessing.Pipe: a duplex ping-pong with a Process, poll with a
// timeout, a one-way pipe whose ends only receive or only send.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;

constexpr int kRounds = 1000;

// Sends back each number plus one, until it gets a negative one.
void pong(fiber::Connection<int> end) {
  while (true) {
    int ball = end.recv();
    if (ball < 0) return;
    end.send(ball + 1);
  }
}

void write_line(fiber::Connection<std::string> end, std::string line) { end.send(line); }

}  // namespace

FIBER_TASK(pong);
FIBER_TASK(write_line);

namespace {

TEST(Pipe, PingPongWithAProcess) {
  auto [mine, theirs] = fiber::Pipe<int>();
  fiber::Process player(pong, theirs);
  player.start();
  int ball = 0;
  for (int round = 0; round < kRounds; ++round) {
    mine.send(ball);
    ball = mine.recv();
  }
  EXPECT_EQ(ball, kRounds);
  mine.send(-1);
  player.join();
  EXPECT_EQ(player.exitcode(), 0);
}

TEST(Pipe, PollWaitsAtMostItsTimeout) {
  auto [first, second] = fiber::Pipe<int>();
  EXPECT_FALSE(first.poll());
  EXPECT_FALSE(first.poll(200ms));
  second.send(5);
  EXPECT_TRUE(first.poll(1s));
  EXPECT_TRUE(first.poll());  // poll does not take it
  EXPECT_EQ(first.recv(), 5);
  EXPECT_THROW(first.recv(100ms), fiber::Empty);
  first.send(6);  // duplex: both ways
  EXPECT_EQ(second.recv(1s), 6);
}

TEST(Pipe, OneWayReadsAtTheFirstEndOnly) {
  auto [reader, writer] = fiber::Pipe<std::string>(false);
  EXPECT_TRUE(reader.readable());
  EXPECT_FALSE(reader.writable());
  EXPECT_FALSE(writer.readable());
  EXPECT_TRUE(writer.writable());
  EXPECT_THROW(reader.send("no"), std::logic_error);
  EXPECT_THROW(writer.recv(), std::logic_error);
  fiber::Process process(write_line, writer, std::string("from a process"));
  process.start();
  EXPECT_EQ(reader.recv(10s), "from a process");
  process.join();
}

}  // namespace
