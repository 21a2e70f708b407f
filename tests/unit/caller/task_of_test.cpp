// What a pool reads off whatever names a task (fiber/detail/task_of.hpp): a registered function,
// a fiber::Task handle, a deadline (fiber::with_timeout) and a timing name (fiber::timed_as),
// nested either way, each keeping what the other says.
#include "fiber/detail/task_of.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fiber/task.hpp"

namespace {

using namespace std::chrono_literals;
using fiber::detail::task_name;
using fiber::detail::timeout_of;
using fiber::detail::timing_of;

int twice(int x) { return 2 * x; }
FIBER_TASK(twice);

TEST(TaskOf, APlainTaskHasNoDeadlineAndIsTimedUnderItsName) {
  EXPECT_EQ(task_name(&twice), "twice");
  EXPECT_EQ(timeout_of(&twice), 0ms);
  EXPECT_EQ(timing_of(&twice), "");
  const fiber::Task<int(int)> handle{"twice"};
  EXPECT_EQ(task_name(handle), "twice");
  EXPECT_EQ(timing_of(handle), "");
}

TEST(TaskOf, ATimingNameKeepsTheTasksNameAndDeadline) {
  const auto named = fiber::timed_as(fiber::with_timeout(&twice, 5s), "slow kind");
  EXPECT_EQ(task_name(named), "twice");
  EXPECT_EQ(timeout_of(named), 5000ms);
  EXPECT_EQ(timing_of(named), "slow kind");
  const auto timed = fiber::with_timeout(fiber::timed_as(&twice, "quick kind"), 2s);
  EXPECT_EQ(task_name(timed), "twice");
  EXPECT_EQ(timeout_of(timed), 2000ms);
  EXPECT_EQ(timing_of(timed), "quick kind");
}

}  // namespace
