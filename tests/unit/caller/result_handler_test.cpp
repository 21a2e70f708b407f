// The result handler alone: callbacks run one at a time on one thread that is not the poster's,
// in the order posted, all of them before its destructor returns; a job with a callback is done
// only once the callback has finished.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "caller/job_state.hpp"
#include "caller/result_handler.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

TEST(ResultHandler, RunsCallbacksInOrderOnOneOtherThread) {
  constexpr int kCallbacks = 1000;
  std::mutex mutex;
  std::vector<int> order;
  std::set<std::thread::id> threads;
  {
    ResultHandler handler;
    for (int i = 0; i < kCallbacks; ++i) {
      handler.post([&, i] {
        std::lock_guard lock(mutex);
        order.push_back(i);
        threads.insert(std::this_thread::get_id());
      });
    }
  }  // the destructor runs what is queued
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kCallbacks));
  for (int i = 0; i < kCallbacks; ++i) EXPECT_EQ(order[i], i);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
}

TEST(ResultHandler, AJobIsDoneOnlyAfterItsCallback) {
  Bytes argument;
  encode_into(argument, 7);
  auto job =
      std::make_shared<Job>("echo", argument, std::vector<std::uint64_t>{0, argument.size()}, 1);
  ResultHandler handler;
  std::mutex mutex;
  bool release = false;
  std::optional<int> called_with;
  job->state().call_when_done([&] {
    handler.post([&] {
      for (;;) {
        std::lock_guard lock(mutex);
        if (release) break;
      }
      called_with = job->decoded_result<int>(0);
      job->state().callback_finished();
    });
  });
  auto payload = std::make_shared<const Bytes>(argument);
  JobState::ItemResult result{true, 0, argument.size(), {}};
  job->state().store(0, std::span(&result, 1), payload);
  EXPECT_FALSE(job->done());
  EXPECT_FALSE(job->wait_all(Clock::now() + 20ms));
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  EXPECT_TRUE(job->wait_all(Clock::now() + 30s));
  EXPECT_TRUE(job->done());
  EXPECT_EQ(called_with, 7);
}

}  // namespace
}  // namespace fiber::detail
