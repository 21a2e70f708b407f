// Work goes on while the master computes: the dispatcher does not need the caller in a pool call.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cmath>
#include <tuple>
#include <vector>

#include "support/tasks.hpp"

namespace {

using fiber_test::sleep_then;
using namespace std::chrono_literals;

// Keeps the calling thread busy (no pool calls) for `duration`.
double compute_for(std::chrono::steady_clock::duration duration) {
  double sum = 0;
  auto until = std::chrono::steady_clock::now() + duration;
  for (long i = 1; std::chrono::steady_clock::now() < until; ++i) sum += std::sqrt(double(i));
  return sum;
}

TEST(Progress, ApplyAsyncCompletesWhileTheMasterComputes) {
  fiber::Pool pool({.processes = 1});
  // Four tasks in sequence on one worker: they can only all finish if the dispatcher keeps
  // sending while this thread computes.
  std::vector<fiber::AsyncResult<int>> pending;
  for (int i = 0; i < 4; ++i) pending.push_back(pool.apply_async(sleep_then, i, 150));
  EXPECT_GT(compute_for(3s), 0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(pending[i].ready()) << "task " << i << " did not progress";
    EXPECT_EQ(pending[i].get(), i);
  }
}

TEST(Progress, MapAsyncCompletesWhileTheMasterComputes) {
  fiber::Pool pool({.processes = 2});
  auto pending = pool.map_async(sleep_then, std::vector<std::tuple<int, int>>(10, {1, 50}), 1);
  compute_for(3s);
  EXPECT_TRUE(pending.ready());
  EXPECT_EQ(pending.get(), std::vector<int>(10, 1));
}

}  // namespace
