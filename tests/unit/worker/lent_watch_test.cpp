// LentWatch (worker/lent_watch.hpp): how long a lent worker sleeps, and when it heartbeats.
#include "worker/lent_watch.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using fiber::detail::LentWatch;
using namespace std::chrono_literals;

const LentWatch::Clock::time_point kStart = LentWatch::Clock::now();

TEST(LentWatch, AQuietWorkerNapsHalfAHeartbeatCappedAtTheLongNap) {
  LentWatch often(40ms, kStart);
  EXPECT_EQ(often.nap(false, /*task_busy=*/true, kStart + 1s), 20ms);
  LentWatch rarely(10s, kStart);
  EXPECT_EQ(rarely.nap(false, true, kStart + 1s), LentWatch::kNap);
  LentWatch very_often(1ms, kStart);
  EXPECT_EQ(very_often.nap(false, true, kStart + 1s), LentWatch::kPoll);
}

TEST(LentWatch, AWorkerWhoseTaskProcessIsIdleNapsTwoHeartbeatsCappedAtTheIdleNap) {
  LentWatch often(40ms, kStart);
  EXPECT_EQ(often.nap(false, /*task_busy=*/false, kStart + 1s), 80ms);
  LentWatch rarely(10s, kStart);
  EXPECT_EQ(rarely.nap(false, false, kStart + 1s), LentWatch::kIdleNap);
}

TEST(LentWatch, ItPollsWhileMpiIsBusyAndShortlyAfterAMessage) {
  LentWatch watch(10s, kStart);
  EXPECT_EQ(watch.nap(/*mpi_busy=*/true, false, kStart + 1s), LentWatch::kPoll);
  watch.message_came(kStart + 1s);
  EXPECT_EQ(watch.nap(false, true, kStart + 1s + LentWatch::kAwake / 2), LentWatch::kPoll);
  EXPECT_EQ(watch.nap(false, true, kStart + 1s + LentWatch::kAwake), LentWatch::kNap);
}

TEST(LentWatch, ABusyTaskProcessGetsAHeartbeatEveryInterval) {
  LentWatch watch(1s, kStart);
  EXPECT_FALSE(watch.look(/*task_busy=*/true, /*last_sent=*/kStart, kStart + 500ms));
  EXPECT_TRUE(watch.look(true, kStart, kStart + 1s));
  EXPECT_FALSE(watch.look(true, kStart + 1s, kStart + 1500ms));
}

TEST(LentWatch, AnIdleTaskProcessGetsNoHeartbeatUnlessTheWorkerStalled) {
  LentWatch watch(1s, kStart);
  EXPECT_FALSE(watch.look(/*task_busy=*/false, kStart, kStart + 900ms));
  EXPECT_FALSE(watch.look(false, kStart, kStart + 1800ms));  // looked 900 ms ago: no stall
  // Its idle nap (2 heartbeats) passed: no stall either.
  EXPECT_FALSE(watch.look(false, kStart, kStart + 3800ms));
  // 5 s between two looks (stopped, starved): the master may have taken it for lost.
  EXPECT_TRUE(watch.look(false, kStart, kStart + 8800ms));
}

}  // namespace
