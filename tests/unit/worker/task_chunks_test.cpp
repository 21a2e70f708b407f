// TaskChunks' deadline: when the front chunk's item may be taken for timed out, as the task
// process's progress page reads, which the worker's naps end at, and overdue() past it.
#include "worker/task_chunks.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace {

using namespace std::chrono_literals;
using fiber::Bytes;
using fiber::detail::RunHeader;
using fiber::detail::TaskChunks;
using fiber::detail::TaskProgress;
using Clock = TaskChunks::Clock;

constexpr std::uint64_t kChunk = 7;
constexpr std::uint32_t kTimeoutMs = 100;

std::int64_t ns_of(Clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

TaskChunks ignoring_results() {
  return TaskChunks([](std::shared_ptr<Bytes>) {});
}

TEST(TaskChunks, AChunkWithoutATimeoutHasNoDeadline) {
  TaskChunks chunks = ignoring_results();
  TaskProgress page;
  EXPECT_FALSE(chunks.deadline(page));  // no chunk at all
  chunks.add(RunHeader{.chunk_id = kChunk, .name_size = 0, .count = 1, .flags = 0, .timeout_ms = 0},
             false, Clock::now());
  page.chunk.store(kChunk);
  EXPECT_FALSE(chunks.deadline(page));
}

TEST(TaskChunks, TheDeadlineIsTheRunningItemsStartPlusTheTimeout) {
  TaskChunks chunks = ignoring_results();
  TaskProgress page;
  const auto sent = Clock::now();
  chunks.add(
      RunHeader{
          .chunk_id = kChunk, .name_size = 0, .count = 2, .flags = 0, .timeout_ms = kTimeoutMs},
      false, sent);
  const auto timeout = std::chrono::milliseconds(kTimeoutMs);
  // Not started yet (the page names an earlier chunk): its clock runs from its send.
  EXPECT_EQ(chunks.deadline(page), sent + timeout);

  const auto started = sent + 5ms;
  page.item.store(1);
  page.item_started_ns.store(ns_of(started));
  page.chunk.store(kChunk);
  EXPECT_EQ(chunks.deadline(page), started + timeout);
  EXPECT_FALSE(chunks.overdue(page, started + timeout));
  EXPECT_EQ(chunks.overdue(page, started + timeout + 1ms), 1u);  // the item it runs

  page.chunk.store(kChunk + 1);  // moved past it: its records are on the way
  EXPECT_FALSE(chunks.deadline(page));
  EXPECT_FALSE(chunks.overdue(page, started + 10 * timeout));
}

}  // namespace
