#include "dispatch/silence_queue.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

const Clock::time_point kStart = Clock::time_point{} + 1h;
const SilenceQueue::Allowed kAsTheTimeout = [](Clock::duration timeout) { return timeout; };

TEST(SilenceQueue, NobodyIsSilentBeforeTheTimeoutRunsOut) {
  SilenceQueue queue;
  queue.watch(0, 10s, kStart);
  EXPECT_FALSE(queue.silent(kStart + 10s, kAsTheTimeout));
  EXPECT_EQ(queue.silent(kStart + 11s, kAsTheTimeout), 0);
  EXPECT_EQ(queue.silent(kStart + 11s, kAsTheTimeout), 0);  // still watched until unwatched
  queue.unwatch(0);
  EXPECT_FALSE(queue.silent(kStart + 11s, kAsTheTimeout));
}

TEST(SilenceQueue, TheLongestSilentComesFirstAndAnswersMoveAWorkerBack) {
  SilenceQueue queue;
  queue.watch(1, 10s, kStart + 1s);
  queue.watch(2, 10s, kStart);
  queue.watch(3, 10s, kStart + 2s);
  EXPECT_EQ(queue.silent(kStart + 20s, kAsTheTimeout), 2);
  queue.watch(2, 10s, kStart + 15s);  // heard from again
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.silent(kStart + 20s, kAsTheTimeout), 1);
  queue.unwatch(1);
  queue.unwatch(3);
  EXPECT_FALSE(queue.silent(kStart + 20s, kAsTheTimeout));
}

TEST(SilenceQueue, EachTimeoutIsAGroupOfItsOwn) {
  SilenceQueue queue;
  queue.watch(0, 1s, kStart + 5s);  // short timeout, heard late
  queue.watch(1, 60s, kStart);      // long timeout, heard early
  queue.watch(2, 60s, kStart + 1s);
  EXPECT_EQ(queue.silent(kStart + 7s, kAsTheTimeout), 0);
  queue.unwatch(0);
  EXPECT_FALSE(queue.silent(kStart + 7s, kAsTheTimeout));
  EXPECT_EQ(queue.silent(kStart + 61s, kAsTheTimeout), 1);
}

TEST(SilenceQueue, TheAllowedSilenceIsAskedPerGroup) {
  SilenceQueue queue;
  queue.watch(4, 10s, kStart);
  auto doubled = [](Clock::duration timeout) { return 2 * timeout; };
  EXPECT_FALSE(queue.silent(kStart + 15s, doubled));
  EXPECT_EQ(queue.silent(kStart + 21s, doubled), 4);
}

TEST(SilenceQueue, ClearForgetsEveryWorker) {
  SilenceQueue queue;
  queue.watch(0, 1s, kStart);
  queue.watch(9, 1s, kStart);
  queue.clear();
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.silent(kStart + 1h, kAsTheTimeout));
  queue.unwatch(9);  // (nothing to do)
}

}  // namespace
}  // namespace fiber::detail
