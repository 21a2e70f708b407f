#include "dispatch/silence_watch.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

constexpr Clock::duration kTimeout = 10s;
const Clock::time_point kStart = Clock::time_point{} + 1h;

TEST(SilenceWatch, AllowsTheWorkerTimeoutAtFirst) {
  SilenceWatch watch;
  EXPECT_EQ(watch.allowed(kTimeout, kStart), kTimeout);
  EXPECT_FALSE(watch.on_loss(kStart, kTimeout));  // one loss is no pattern
  EXPECT_EQ(watch.allowed(kTimeout, kStart + 1s), kTimeout);
}

TEST(SilenceWatch, LossesCloseTogetherDoubleTheAllowedSilence) {
  SilenceWatch watch;
  watch.on_loss(kStart, kTimeout);
  EXPECT_TRUE(watch.on_loss(kStart + 5s, kTimeout));
  EXPECT_EQ(watch.allowed(kTimeout, kStart + 6s), 2 * kTimeout);
}

TEST(SilenceWatch, LossesAtTheSameMomentAreOneEvent) {
  SilenceWatch watch;
  watch.on_loss(kStart, kTimeout);
  EXPECT_FALSE(watch.on_loss(kStart, kTimeout));
  EXPECT_EQ(watch.scale(), 1);
}

TEST(SilenceWatch, LossesFarApartChangeNothing) {
  SilenceWatch watch;
  watch.on_loss(kStart, kTimeout);
  EXPECT_FALSE(watch.on_loss(kStart + SilenceWatch::kCloseLosses * kTimeout + 1s, kTimeout));
  EXPECT_EQ(watch.scale(), 1);
}

TEST(SilenceWatch, TheScaleIsCappedAndComesBackAfterACalmPeriod) {
  SilenceWatch watch;
  auto now = kStart;
  for (int i = 0; i < 20; ++i) {
    now += 1s;
    watch.on_loss(now, watch.allowed(kTimeout, now));
  }
  EXPECT_EQ(watch.scale(), SilenceWatch::kMaxScale);
  EXPECT_EQ(watch.allowed(kTimeout, now + 1s), SilenceWatch::kMaxScale * kTimeout);
  EXPECT_EQ(watch.allowed(kTimeout, now + SilenceWatch::kCalmAfter * kTimeout + 1s), kTimeout);
}

}  // namespace
}  // namespace fiber::detail
