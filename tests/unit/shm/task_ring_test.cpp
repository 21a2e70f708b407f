// The task ring (task_ring.hpp): a byte stream in shared memory, across the end of its buffer,
// full, with more bytes than it holds, between real processes (futex wake-ups, a reader asleep on
// several rings or in poll() on its doorbell), and with its peer gone.
#include "shm/task_ring.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "posix/futex.hpp"
#include "posix/unique_fd.hpp"
#include "posix/wait_readable.hpp"
#include "support/ring_memory.hpp"

namespace {

using namespace std::chrono_literals;
using fiber::Bytes;
using fiber::unit::SharedRing;

constexpr std::size_t kSmallRing = 64;
// Long enough for a forked peer on a loaded machine; a lost wake-up or byte fails the test.
constexpr auto kPeerWait = 10s;
// Long enough that the forked reader has gone to sleep on its futex before the write.
constexpr auto kLetItSleep = 50ms;

Bytes pattern(std::size_t size, std::size_t seed = 0) {
  Bytes bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7 + seed) % 251);
  return bytes;
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(TaskRing, BytesComeOutInOrderAcrossTheEndOfTheBuffer) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  Bytes first = pattern(40), second = pattern(50, 3), out;
  ASSERT_EQ(ring.write_some(first), first.size());
  ASSERT_EQ(ring.read_into(out), first.size());
  EXPECT_EQ(out, first);
  out.clear();
  ASSERT_EQ(ring.write_some(second), second.size());  // 24 bytes to the end, 26 from the start
  ASSERT_EQ(ring.read_into(out), second.size());
  EXPECT_EQ(out, second);
  EXPECT_TRUE(ring.empty());
}

TEST(TaskRing, AFullRingTakesWhatFitsAndNoMore) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  Bytes bytes = pattern(100);
  EXPECT_EQ(ring.write_some(bytes), kSmallRing);
  EXPECT_EQ(ring.space(), 0u);
  EXPECT_EQ(ring.write_some(bytes), 0u);
  EXPECT_FALSE(ring.wait_space(1, 1ms));
  Bytes out;
  EXPECT_EQ(ring.read_into(out), kSmallRing);
  EXPECT_EQ(out, Bytes(bytes.begin(), bytes.begin() + kSmallRing));
  EXPECT_EQ(ring.space(), kSmallRing);
}

TEST(TaskRing, MoreBytesThanItHoldsGoThroughInPiecesToAnotherProcess) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  constexpr std::size_t kBytes = 1 << 20;
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    bool wrote = ring.write_all(pattern(kBytes), kPeerWait, [] { return false; });
    ring.close();
    _exit(wrote ? 0 : 1);
  }
  Bytes out;
  while (out.size() < kBytes && ring.wait_readable(kPeerWait)) {
    if (ring.read_into(out) == 0 && ring.closed()) break;
  }
  EXPECT_EQ(exit_status(writer), 0);
  ring.read_into(out);
  EXPECT_TRUE(ring.closed());
  EXPECT_EQ(out, pattern(kBytes));
}

TEST(TaskRing, ASleepingReaderInAnotherProcessIsWokenByAWrite) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    Bytes out;
    bool woken = ring.wait_readable(kPeerWait) && ring.read_into(out) == 3;
    _exit(woken ? 0 : 1);
  }
  std::this_thread::sleep_for(kLetItSleep);
  Bytes bytes = pattern(3);
  ASSERT_EQ(ring.write_some(bytes), 3u);
  EXPECT_EQ(exit_status(reader), 0);
}

// A reader that sleeps on several rings at once (the master on its lanes' answers): with its
// flags raised, a write into one of the rings wakes its sleep on their words in another process;
// a ring with bytes waiting lets nobody sleep.
TEST(TaskRing, AReaderAsleepOnSeveralRingsIsWokenByAWriteIntoOne) {
  SharedRing first(kSmallRing);
  SharedRing second(kSmallRing);
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    bool may_sleep = first.ring.reader_may_sleep() && second.ring.reader_may_sleep();
    const fiber::posix::FutexWatch watches[] = {{&first.ring.reader_word(), 1},
                                                {&second.ring.reader_word(), 1}};
    const auto start = std::chrono::steady_clock::now();
    fiber::posix::futex_wait_any(watches, kPeerWait);
    bool woken = std::chrono::steady_clock::now() - start < kPeerWait / 2 && !second.ring.empty();
    _exit(may_sleep && woken ? 0 : 1);
  }
  std::this_thread::sleep_for(kLetItSleep);
  Bytes bytes = pattern(3);
  ASSERT_EQ(second.ring.write_some(bytes), 3u);
  EXPECT_EQ(exit_status(reader), 0);
  EXPECT_FALSE(second.ring.reader_may_sleep());
  EXPECT_TRUE(first.ring.reader_may_sleep());
}

// A reader that sleeps in poll() on its doorbell (a worker whose task runs long, beside the
// master's doorbell): the writer, forked after the doorbell was set, makes it readable with its
// write; a ring with bytes waiting lets nobody sleep, and a reader awake again costs the writer
// no doorbell write.
TEST(TaskRing, AReaderAsleepOnItsDoorbellIsWokenByAWriteInAnotherProcess) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  fiber::posix::UniqueFd doorbell(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  ASSERT_TRUE(doorbell);
  ring.set_reader_doorbell(doorbell.get());
  ASSERT_TRUE(ring.reader_may_sleep_on_doorbell());
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    std::this_thread::sleep_for(kLetItSleep);
    Bytes bytes = pattern(3);
    _exit(ring.write_some(bytes) == 3 ? 0 : 1);
  }
  const auto start = std::chrono::steady_clock::now();
  const bool rung = fiber::posix::wait_readable(doorbell.get(), kPeerWait);
  EXPECT_LT(std::chrono::steady_clock::now() - start, kPeerWait / 2);
  ring.reader_awake();
  EXPECT_EQ(exit_status(writer), 0);
  EXPECT_TRUE(rung);
  EXPECT_FALSE(ring.empty());
  EXPECT_FALSE(ring.reader_may_sleep_on_doorbell());  // bytes wait: no sleep

  std::uint64_t count = 0;
  ASSERT_EQ(read(doorbell.get(), &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_EQ(count, 1u);
  Bytes out;
  ring.read_into(out);
  Bytes more = pattern(2);
  ASSERT_EQ(ring.write_some(more), 2u);  // the reader is awake: the doorbell stays quiet
  EXPECT_FALSE(fiber::posix::wait_readable(doorbell.get(), std::chrono::milliseconds(0)));
}

TEST(TaskRing, AWriterWhoseReaderIsGoneGivesUpWhenToldSo) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) _exit(0);  // gone without reading
  int looks = 0;
  bool wrote = ring.write_all(pattern(2 * kSmallRing), 1ms, [&] {
    ++looks;
    return waitpid(reader, nullptr, WNOHANG) == 0;
  });
  EXPECT_FALSE(wrote);
  EXPECT_GE(looks, 1);
  EXPECT_EQ(ring.space(), 0u);
}

TEST(TaskRing, TheReaderSeesTheCloseAfterTheBytesBeforeIt) {
  SharedRing shared(kSmallRing);
  auto& ring = shared.ring;
  Bytes bytes = pattern(10), out;
  ring.write_some(bytes);
  ring.close();
  EXPECT_TRUE(ring.wait_readable(0ns));
  EXPECT_EQ(ring.read_into(out), 10u);
  EXPECT_TRUE(ring.closed());
  EXPECT_TRUE(ring.wait_readable(0ns));  // closed: nothing to wait for
  ring.reset();
  EXPECT_FALSE(ring.closed());
  EXPECT_TRUE(ring.empty());
}

TEST(TaskRing, ItsSizeIsAPowerOfTwo) {
  auto memory = SharedRing::map(kSmallRing);
  EXPECT_THROW(fiber::detail::task_ring::Ring(memory.data(), kSmallRing - 1),
               std::invalid_argument);
}

}  // namespace
