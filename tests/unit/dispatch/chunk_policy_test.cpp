#include "dispatch/chunk_policy.hpp"

#include <gtest/gtest.h>

namespace fiber::detail {
namespace {

TaskTiming measured(double seconds_per_item) { return {seconds_per_item, true}; }

TEST(ChunkSize, ARequestedSizeIsKeptUpToWhatRemains) {
  auto timing = measured(1e-6);
  EXPECT_EQ(chunk_policy::chunk_size(10, 100, 4, &timing), 10u);
  EXPECT_EQ(chunk_policy::chunk_size(10, 3, 4, &timing), 3u);
  EXPECT_EQ(chunk_policy::chunk_size(10, 100, 4, nullptr), 10u);
}

TEST(ChunkSize, AnUnmeasuredTaskIsProbedOneItemAtATime) {
  EXPECT_EQ(chunk_policy::chunk_size(0, 1000, 4, nullptr), 1u);
}

TEST(ChunkSize, TinyItemsAreGuidedByWhatIsLeftPerWorker) {
  auto timing = measured(1e-9);  // by time alone: 500,000 items
  EXPECT_EQ(chunk_policy::chunk_size(0, 1000, 4, &timing), 1000u / (2 * 4));
  EXPECT_EQ(chunk_policy::chunk_size(0, 5, 4, &timing), 1u);       // never 0
  EXPECT_EQ(chunk_policy::chunk_size(0, 1000, 0, &timing), 500u);  // no worker yet: as for one
}

TEST(ChunkSize, LongerItemsGetChunksOfAboutTheTargetTime) {
  auto timing = measured(1e-4);
  EXPECT_EQ(chunk_policy::chunk_size(0, 100000, 4, &timing),
            static_cast<std::size_t>(chunk_policy::kTargetChunkSeconds / 1e-4));
  auto slow = measured(1.0);
  EXPECT_EQ(chunk_policy::chunk_size(0, 100000, 4, &slow), 1u);
}

TEST(ChunkSize, AMeasuredTimeOfZeroDoesNotDivideByZero) {
  auto timing = measured(0.0);
  EXPECT_EQ(chunk_policy::chunk_size(0, 64, 1, &timing), 32u);
}

TEST(InFlightLimit, OneChunkUntilMeasuredAndForLongChunks) {
  EXPECT_EQ(chunk_policy::in_flight_limit(nullptr, 1), 1u);
  auto timing = measured(1e-3);
  EXPECT_EQ(chunk_policy::in_flight_limit(&timing, 2), 1u);  // 2 ms: alone
}

TEST(InFlightLimit, ShortChunksQueueAboutTheQueuedTime) {
  auto timing = measured(1e-5);
  EXPECT_EQ(chunk_policy::in_flight_limit(&timing, 1),
            static_cast<std::size_t>(chunk_policy::kQueuedSeconds / 1e-5));
  auto tiny = measured(1e-9);
  EXPECT_EQ(chunk_policy::in_flight_limit(&tiny, 1), chunk_policy::kMaxQueued);
  auto just_short = measured(1.9e-3);
  EXPECT_EQ(chunk_policy::in_flight_limit(&just_short, 1), chunk_policy::kMinQueued);
}

TEST(TaskTimings, UnknownUntilRecordedThenARunningMean) {
  TaskTimings timings;
  EXPECT_EQ(timings.of("step"), nullptr);
  timings.record("step", 4'000'000, 4);  // 1 ms per item
  ASSERT_NE(timings.of("step"), nullptr);
  EXPECT_DOUBLE_EQ(timings.of("step")->seconds_per_item, 1e-3);
  timings.record("step", 2'000'000, 1);  // 2 ms
  double mean = (1 - TaskTimings::kNewestWeight) * 1e-3 + TaskTimings::kNewestWeight * 2e-3;
  EXPECT_DOUBLE_EQ(timings.of("step")->seconds_per_item, mean);
  EXPECT_EQ(timings.of("other"), nullptr);
  timings.record("other", 1000, 0);  // no items: nothing measured
  EXPECT_EQ(timings.of("other"), nullptr);
  EXPECT_DOUBLE_EQ(timings.of("step")->seconds_per_item, mean);  // the remembered entry
}

}  // namespace
}  // namespace fiber::detail
