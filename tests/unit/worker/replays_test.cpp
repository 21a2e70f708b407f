// Replays (worker/replays.hpp): the calls a new task process replays, in order; a broadcast
// replaces the previous one of its task; a lane's task process skips what the master wrote
// into that lane itself.
#include "worker/replays.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/run_bodies.hpp"
#include "wire/run_entry.hpp"

namespace {

using fiber::Bytes;
using fiber::detail::Replays;
using fiber::detail::RunBody;
using fiber::unit::run_body;

Bytes call(const std::string& task, std::uint64_t chunk_id) {
  return run_body(task, {Bytes(1, 'x')}, {chunk_id});
}

std::vector<std::uint64_t> chunk_ids(const std::vector<std::span<const char>>& entries) {
  std::vector<std::uint64_t> ids;
  for (auto entry : entries) ids.push_back(RunBody(entry).header().chunk_id);
  return ids;
}

TEST(Replays, CallsReplayInTheOrderTheyWereKept) {
  Replays replays;
  replays.remember(call("initializer", 1));
  replays.remember(call("set_weights", 2));
  replays.remember(call("set_noise", 3));
  EXPECT_EQ(chunk_ids(replays.to_replay()), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(Replays, ABroadcastReplacesThePreviousOneOfItsTaskInItsPlace) {
  Replays replays;
  replays.remember(call("set_weights", 1));
  replays.remember(call("set_noise", 2));
  replays.remember(call("set_weights", 3));
  EXPECT_EQ(chunk_ids(replays.to_replay()), (std::vector<std::uint64_t>{3, 2}));
}

TEST(Replays, ALanesTaskProcessSkipsWhatTheMasterWroteIntoThatLane) {
  Replays replays;
  replays.remember(call("initializer", 1));              // through the worker
  replays.remember(call("set_weights", 2), /*lane=*/7);  // written into lane 7 by the master
  replays.remember(call("set_noise", 3), /*lane=*/8);
  EXPECT_EQ(chunk_ids(replays.to_replay(7)), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(chunk_ids(replays.to_replay()), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(Replays, ClearForgetsEveryCall) {
  Replays replays;
  replays.remember(call("initializer", 1));
  replays.clear();
  EXPECT_TRUE(replays.to_replay().empty());
}

TEST(Replays, AParkedWorkerKeepsOnlyAnInitializerThatRunsAhead) {
  using fiber::detail::kRunAhead;
  using fiber::detail::kRunBroadcast;
  using fiber::detail::kRunInitializer;
  Replays replays;
  replays.remember(
      run_body("context", {Bytes(1, 'x')}, {.chunk_id = 1, .flags = kRunInitializer | kRunAhead}));
  replays.remember(
      run_body("set_weights", {Bytes(1, 'x')}, {.chunk_id = 2, .flags = kRunBroadcast}));
  replays.keep_ahead();
  EXPECT_EQ(chunk_ids(replays.to_replay()), (std::vector<std::uint64_t>{1}));
  ASSERT_TRUE(replays.ahead());
  EXPECT_EQ(RunBody(*replays.ahead()).header().chunk_id, 1U);
}

TEST(Replays, AnInitializerThatDoesNotRunAheadIsNotKeptByAParkedWorker) {
  Replays replays;
  replays.remember(run_body("initializer", {Bytes(1, 'x')},
                            {.chunk_id = 1, .flags = fiber::detail::kRunInitializer}));
  replays.keep_ahead();
  EXPECT_TRUE(replays.to_replay().empty());
  EXPECT_FALSE(replays.ahead());
}

}  // namespace
