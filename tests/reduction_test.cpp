// Pool::map_reduce: the value is the fold of a tree fixed by the pool's layout (items in a
// chunk, chunks in a node, nodes in order), to the bit, whoever runs what, also when a worker is
// lost in the middle; the order of combination is the items' (a concatenation comes out in item
// order); a failing task fails the call naming it; bad calls are refused; a slow task's items
// spread over the workers whatever another reduction's task cost.
// (tests/multinode_test.cpp: the same over several nodes, one value per node to the master.)
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/reduction_tasks.hpp"
#include "support/tasks.hpp"

int fail_at_seven(int i) {
  if (i == 7) throw std::domain_error("seven is out of range");
  return i;
}
FIBER_TASK(fail_at_seven);

int plus(int a, int b) { return a + b; }
FIBER_TASK(plus);

// The task process that ran the item, after a nap of `milliseconds`: a worker's one task process
// names it.
std::vector<long> task_process_after(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return {static_cast<long>(getpid())};
}
FIBER_TASK(task_process_after);

std::vector<long> join_pids(std::vector<long> a, const std::vector<long>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
FIBER_TASK(join_pids);

void note_round(int /*round*/) {}
FIBER_TASK(note_round);

namespace {

using namespace fiber_test;

std::vector<int> range(int n) {
  std::vector<int> items(n);
  std::iota(items.begin(), items.end(), 0);
  return items;
}

TEST(MapReduce, ConcatenationComesOutInItemOrder) {
  fiber::Pool pool(3);
  EXPECT_EQ(pool.map_reduce(single, range(1000), concatenate), range(1000));
  EXPECT_EQ(pool.map_reduce(single, range(1000), concatenate, 7), range(1000));
  EXPECT_EQ(pool.map_reduce(single, range(1), concatenate), range(1));
  // Every partial result was taken from the node's store once its node's value was made (the
  // store's anchor stays while the run's processes hold it).
  std::string of_this_run = "-" + std::to_string(getpid()) + ".";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.starts_with("fiber-partial.") &&
                 name.find(of_this_run) != std::string::npos && !name.ends_with(".anchor"))
        << "left in the node's store: " << name;
  }
}

TEST(MapReduce, SumHasTheBitsOfTheLayoutsTree) {
  constexpr int kItems = 1000;
  // The data tells the orders apart: the tree's sum is not the linear one.
  ASSERT_NE(tree_sum({kItems}, {10}), linear_sum(kItems));
  fiber::Pool pool(4);
  EXPECT_EQ(pool.map_reduce(spread_value, range(kItems), add_doubles, 10),
            tree_sum({kItems}, {10}));
  // Automatic: two chunks per worker, 4 workers on one host.
  double automatic = tree_sum({kItems}, {kItems / 8});
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(pool.map_reduce(spread_value, range(kItems), add_doubles), automatic);
  }
  auto pending = pool.map_reduce_async(spread_value, range(kItems), add_doubles);
  EXPECT_TRUE(pending.wait(std::chrono::seconds(60)));
  EXPECT_TRUE(pending.ready());
  EXPECT_EQ(pending.get(), automatic);
}

TEST(MapReduce, ValueKeepsItsBitsWhenAWorkerIsLostMidway) {
  constexpr int kItems = 400;
  std::string marker =
      std::filesystem::temp_directory_path() / ("fiber-reduction-kill-" + std::to_string(getpid()));
  std::filesystem::remove(marker);
  fiber::Pool pool({.processes = 4, .worker_timeout = std::chrono::seconds(1)});
  std::vector<std::tuple<int, int, std::string>> items;
  for (int i = 0; i < kItems; ++i) items.emplace_back(i, kItems / 2, marker);
  double value = pool.map_reduce(spread_value_or_kill_worker, items, add_doubles, 20);
  EXPECT_TRUE(std::filesystem::exists(marker)) << "no worker was killed";
  std::filesystem::remove(marker);
  EXPECT_EQ(value, tree_sum({kItems}, {20}));
  EXPECT_GE(pool.stats().workers_lost, 1u);
}

TEST(MapReduce, ValueKeepsItsBitsWhenANodeLosesItsPartialResults) {
  constexpr int kItems = 400;
  std::string marker =
      std::filesystem::temp_directory_path() / ("fiber-reduction-drop-" + std::to_string(getpid()));
  std::filesystem::remove(marker);
  fiber::Pool pool(3);
  std::vector<std::tuple<int, int, std::string>> items;
  // Late in the call, when most chunks have stored theirs: the node's value cannot be made, and
  // its chunks run again with their results returned to the master.
  for (int i = 0; i < kItems; ++i) items.emplace_back(i, kItems - 10, marker);
  double value = pool.map_reduce(spread_value_or_drop_partials, items, add_doubles, 20);
  EXPECT_TRUE(std::filesystem::exists(marker)) << "no partial result was dropped";
  std::filesystem::remove(marker);
  EXPECT_EQ(value, tree_sum({kItems}, {20}));
}

// Every reduction's chunks run the same task (reduce_chunk); each is timed as the user's task
// it runs, not as all of them: after a reduction of a quick task, one of a slow task whose items
// are as many as the workers puts one item on each worker, also when the workers take it as they
// answer a broadcast (the chunk policy then lets a worker hold several quick chunks). fiber-es at
// 1,024 workers ran three of five generations' episodes on half its workers, two each, so.
TEST(MapReduce, ASlowTasksItemsGoOneToAWorkerAfterAQuickTasksReduction) {
  constexpr int kWorkers = 4;
  constexpr int kSlowItemMilliseconds = 300;
  fiber::Pool pool(kWorkers);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(pool.map_reduce(single, range(1000), concatenate), range(1000));
    pool.broadcast(note_round, round);
    auto pids = pool.map_reduce(task_process_after,
                                std::vector<int>(kWorkers, kSlowItemMilliseconds), join_pids);
    EXPECT_EQ(pids.size(), static_cast<std::size_t>(kWorkers));
    EXPECT_EQ(std::set<long>(pids.begin(), pids.end()).size(), static_cast<std::size_t>(kWorkers))
        << "round " << round << ": an item waited for a worker that ran another";
  }
}

TEST(MapReduce, AFailingTaskFailsTheCallNamingIt) {
  fiber::Pool pool(2);
  try {
    pool.map_reduce(fail_at_seven, range(20), plus);
    ADD_FAILURE() << "a reduction with a failing item returned";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.task(), "fail_at_seven");
    EXPECT_EQ(error.type(), "std::domain_error");
    EXPECT_EQ(error.message(), "seven is out of range");
  }
  EXPECT_EQ(pool.map_reduce(fail_at_seven, range(7), plus), 21);  // the pool goes on
}

TEST(MapReduce, OneThatOutlivesItsPoolFailsWithPoolClosed) {
  std::optional<fiber::Reduction<double>> pending;
  {
    fiber::Pool pool(2);
    pending.emplace(pool.map_reduce_async(spread_value, range(1000), add_doubles, 10));
  }
  EXPECT_THROW(pending->get(), fiber::PoolClosed);
  fiber::Pool pool(2);  // the runtime goes on
  EXPECT_EQ(pool.map_reduce(spread_value, range(1000), add_doubles, 10), tree_sum({1000}, {10}));
}

TEST(MapReduce, NoItemsIsRefused) {
  fiber::Pool pool(1);
  EXPECT_THROW(pool.map_reduce(single, std::vector<int>{}, concatenate), std::invalid_argument);
}

}  // namespace
