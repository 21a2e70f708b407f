// fiber::Pipe, as Python's multiprocessing.Pipe: a duplex ping-pong with a Process, poll with a
// timeout, a one-way pipe whose ends only receive or only send; what was sent before the reading
// end first read comes first, in order; what a sender sent before it crashed arrives; an end is
// read in one process only; what waits for a reading end that has not read yet is bounded (a send
// past it waits for the reader), and a send to an end whose Process ended unread fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <fiber/fiber.hpp>

#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int kRounds = 1000;
// How much later than its timeout a wait may end on a loaded machine: a bound on hangs, not on
// speed.
constexpr auto kLateWakeUp = 1s;

// Sends back each number plus one, until it gets a negative one.
void pong(fiber::Connection<int> end) {
  while (true) {
    int ball = end.recv();
    if (ball < 0) return;
    end.send(ball + 1);
  }
}

void write_line(fiber::Connection<std::string> end, std::string line) { end.send(line); }

std::vector<int> receive_many(fiber::Connection<int> end, int count) {
  std::vector<int> got;
  for (int i = 0; i < count; ++i) got.push_back(end.recv(10s));
  return got;
}

void send_then_crash(fiber::Connection<int> end, int count) {
  for (int i = 0; i < count; ++i) end.send(i);
  raise(SIGSEGV);
}

bool poll_an_end(fiber::Connection<int> end) { return end.poll(); }

// A value larger than a shared-memory ring goes through it in pieces.
constexpr std::size_t kLargeValue = 3 << 20;

void send_large(fiber::Connection<std::string> end) { end.send(std::string(kLargeValue, 'x')); }

// Ends before its first read.
void die_unread(fiber::Connection<std::string> /*end*/) { raise(SIGKILL); }

void return_unread_later(fiber::Connection<std::string> /*end*/, int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}

// Values of 1 MiB, more of them than the broker keeps for a reader that has not read yet.
constexpr std::size_t kMiB = 1 << 20;
constexpr int kManyMiB = 64;
// What the broker keeps before the first read (queue_wire::kPipeKeptBytes), in those values.
constexpr int kKeptMiB = 16;

}  // namespace

FIBER_TASK(pong);
FIBER_TASK(write_line);
FIBER_TASK(receive_many);
FIBER_TASK(send_then_crash);
FIBER_TASK(poll_an_end);
FIBER_TASK(send_large);
FIBER_TASK(die_unread);
FIBER_TASK(return_unread_later);

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

// Nothing there: poll waits its whole timeout, and not much longer. Something there: it returns
// at once.
TEST(Pipe, PollWaitsAtMostItsTimeout) {
  using Clock = std::chrono::steady_clock;
  auto [first, second] = fiber::Pipe<int>();
  EXPECT_FALSE(first.poll());
  auto started = Clock::now();
  EXPECT_FALSE(first.poll(200ms));
  auto waited = Clock::now() - started;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 200ms + kLateWakeUp);
  second.send(5);
  started = Clock::now();
  EXPECT_TRUE(first.poll(kLateWakeUp));
  EXPECT_LT(Clock::now() - started, kLateWakeUp);
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

// Half is sent before the reading end's process exists (it waits on the broker), half once it reads
// (straight to it): all of it comes, in order.
TEST(Pipe, WhatWasSentBeforeTheFirstReadComesFirstInOrder) {
  constexpr int kHalf = 50;
  auto [mine, theirs] = fiber::Pipe<int>();
  for (int i = 0; i < kHalf; ++i) mine.send(i);
  fiber::Pool pool({.processes = 1});
  auto received = pool.apply_async(receive_many, theirs, 2 * kHalf);
  std::this_thread::sleep_for(200ms);
  for (int i = kHalf; i < 2 * kHalf; ++i) mine.send(i);
  std::vector<int> expected(2 * kHalf);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(received.get(), expected);
}

TEST(Pipe, WhatASenderSentBeforeItCrashedArrives) {
  constexpr int kSent = 3;
  auto [mine, theirs] = fiber::Pipe<int>();
  EXPECT_FALSE(mine.poll());  // this end reads here, so the sender connects straight to it
  fiber::Process sender(send_then_crash, theirs, kSent);
  sender.start();
  sender.join();
  EXPECT_EQ(sender.exitcode(), -SIGSEGV);
  for (int i = 0; i < kSent; ++i) EXPECT_EQ(mine.recv(5s), i);
  EXPECT_THROW(mine.recv(200ms), fiber::Empty);
}

TEST(Pipe, AnEndIsReadInOneProcess) {
  auto [mine, theirs] = fiber::Pipe<int>();
  EXPECT_FALSE(mine.poll());
  fiber::Pool pool({.processes = 1});
  try {
    pool.apply(poll_an_end, mine);
    ADD_FAILURE() << "a second process read the end";
  } catch (const fiber::TaskError& error) {
    EXPECT_NE(error.message().find("an end is read in one process"), std::string::npos)
        << error.message();
  }
  theirs.send(7);
  EXPECT_EQ(mine.recv(5s), 7);  // still this process's end
}

TEST(Pipe, AValueLargerThanTheRingArrivesWhole) {
  auto [mine, theirs] = fiber::Pipe<std::string>();
  EXPECT_FALSE(mine.poll());
  fiber::Process sender(send_large, theirs);
  sender.start();
  EXPECT_EQ(mine.recv(20s), std::string(kLargeValue, 'x'));
  sender.join();
  EXPECT_EQ(sender.exitcode(), 0);
}

// The reading end's Process died before it read: a send fails, as after a first read, instead of
// waiting on the master for nobody.
TEST(Pipe, ASendToAnEndWhoseProcessDiedUnreadFails) {
  auto [mine, theirs] = fiber::Pipe<std::string>();
  fiber::Process reader(die_unread, theirs);
  reader.start();
  reader.join();
  EXPECT_EQ(reader.exitcode(), -SIGKILL);
  try {
    mine.send("anyone?");
    ADD_FAILURE() << "a send to an end whose process ended unread succeeded";
  } catch (const fiber::Error& error) {
    EXPECT_NE(std::string(error.what()).find("ended without reading it"), std::string::npos)
        << error.what();
  }
}

// A sender filling an end whose Process has not read waits once the broker keeps enough, and is
// told when that Process ends (nobody joins it: the sender's own thread is the one waiting).
TEST(Pipe, ASenderWaitingForAnUnreadEndIsToldWhenItsProcessEnds) {
  constexpr int kReaderLives = 500;  // milliseconds
  auto [mine, theirs] = fiber::Pipe<std::string>();
  fiber::Process reader(return_unread_later, theirs, kReaderLives);
  reader.start();
  const std::string value(kMiB, 'v');
  int sent = 0;
  try {
    for (; sent < kManyMiB; ++sent) mine.send(value);
    ADD_FAILURE() << "all " << kManyMiB << " MiB were taken for a reader that never read";
  } catch (const fiber::Error& error) {
    EXPECT_NE(std::string(error.what()).find("ended without reading it"), std::string::npos)
        << error.what();
  }
  EXPECT_LE(sent, kKeptMiB);
  reader.join();
  EXPECT_EQ(reader.exitcode(), 0);
}

// Nobody has read yet: sends stop once the broker keeps enough, and all comes, in order, once the
// end is read.
TEST(Pipe, WhatWaitsForAFirstReadIsBounded) {
  auto [mine, theirs] = fiber::Pipe<std::string>();
  std::atomic<int> sent = 0;
  std::thread sender([&sent, end = theirs]() mutable {
    for (int i = 0; i < kManyMiB; ++i) {
      end.send(std::string(kMiB, static_cast<char>('a' + i % 26)));
      ++sent;
    }
  });
  std::this_thread::sleep_for(500ms);
  EXPECT_LE(sent.load(), kKeptMiB);
  for (int i = 0; i < kManyMiB; ++i) {
    EXPECT_EQ(mine.recv(10s), std::string(kMiB, static_cast<char>('a' + i % 26))) << i;
  }
  sender.join();
  EXPECT_EQ(sent.load(), kManyMiB);
}

}  // namespace
