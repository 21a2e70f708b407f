// fiberrun's grace for a job whose programs have ended (fiberrun/job_end_watch.hpp): it grows
// with the job's processes on the host, each process that ends buys another quiet grace, and a
// job in which nothing ends is ended all the same.
#include "fiberrun/job_end_watch.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using fiberrun::JobEndWatch;
using namespace std::chrono_literals;
constexpr JobEndWatch::Clock::time_point kEnded{};

TEST(JobEndWatch, ASmallJobGetsTheQuietGrace) {
  JobEndWatch watch(kEnded, 0);
  EXPECT_FALSE(watch.overdue(kEnded + JobEndWatch::kQuietGrace));
  EXPECT_TRUE(watch.overdue(kEnded + JobEndWatch::kQuietGrace + 1ms));
}

TEST(JobEndWatch, TheFirstGraceGrowsWithTheProcessesLeft) {
  constexpr int kProcesses = 1040;  // 1,024 workers, the node daemons and their shells
  const auto grace = JobEndWatch::kQuietGrace + JobEndWatch::kGracePerProcess * kProcesses;
  JobEndWatch watch(kEnded, kProcesses);
  watch.look(kEnded + grace / 2, kProcesses);  // none has left yet: no progress
  EXPECT_FALSE(watch.overdue(kEnded + grace));
  EXPECT_TRUE(watch.overdue(kEnded + grace + 1ms));
}

TEST(JobEndWatch, ProcessesThatLeaveKeepItWaiting) {
  JobEndWatch watch(kEnded, 10);
  auto now = kEnded;
  for (int left = 9; left > 0; --left) {
    now += JobEndWatch::kQuietGrace - 1s;  // each end just within the grace of the last
    EXPECT_FALSE(watch.overdue(now));
    watch.look(now, static_cast<std::size_t>(left));
  }
  EXPECT_FALSE(watch.overdue(now + JobEndWatch::kQuietGrace));
  EXPECT_TRUE(watch.overdue(now + JobEndWatch::kQuietGrace + 1ms));
}

TEST(JobEndWatch, ANewProcessOrOneThatComesBackIsNoProgress) {
  JobEndWatch watch(kEnded, 10);
  const auto late = kEnded + JobEndWatch::kQuietGrace / 2;
  watch.look(late, 8);        // progress: 2 ended
  watch.look(late + 1s, 12);  // a daemon forked something
  watch.look(late + 2s, 9);   // fewer than just now, not fewer than ever: no progress
  EXPECT_FALSE(watch.overdue(late + JobEndWatch::kQuietGrace));
  EXPECT_TRUE(watch.overdue(late + JobEndWatch::kQuietGrace + 1ms));
}

TEST(JobEndWatch, AnEarlyEndDoesNotShortenTheFirstGrace) {
  JobEndWatch watch(kEnded, 1000);
  const auto first = JobEndWatch::kQuietGrace + JobEndWatch::kGracePerProcess * 1000;
  watch.look(kEnded + 1s, 999);
  EXPECT_FALSE(watch.overdue(kEnded + first));
  EXPECT_TRUE(watch.overdue(kEnded + first + 1ms));
}

}  // namespace
