// maxtasksperchild: a task process is replaced after that many tasks (chunks, as in Python), and
// the initializer runs again in the new one (CPython's test_pool_worker_lifetime and
// test_pool_maxtasksperchild_invalid, ported).
#include <gtest/gtest.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

bool initialized = false;  // in the task process: set by its initializer
int tasks_here = 0;        // in the task process: tasks it ran

}  // namespace

void initialize_probe() { initialized = true; }
FIBER_TASK(initialize_probe);

// The process that ran it, and how many items that process had run with this one; throws if
// the pool's initializer did not run in this process.
std::pair<long, int> lifetime_probe(int /*ignored*/) {
  if (!initialized) throw std::logic_error("the initializer did not run in this task process");
  return {static_cast<long>(getpid()), ++tasks_here};
}
FIBER_TASK(lifetime_probe);

namespace {

// Items run by each process, from the probes' answers.
std::map<long, int> items_per_process(const std::vector<std::pair<long, int>>& probes) {
  std::map<long, int> items;
  for (const auto& [pid, count] : probes) {
    ++items[pid];
    EXPECT_LE(count, items[pid]) << "process " << pid << " ran items of another pool before";
  }
  return items;
}

TEST(PoolMaxtasksperchild, WorkerLifetime) {  // test_pool_worker_lifetime
  fiber::Pool pool(
      {.processes = 3, .initializer = fiber::call(initialize_probe), .maxtasksperchild = 10});
  EXPECT_EQ(pool.size(), 3);
  std::vector<fiber::AsyncResult<std::pair<long, int>>> results;
  for (int i = 0; i < 100; ++i) results.push_back(pool.apply_async(lifetime_probe, i));
  std::vector<std::pair<long, int>> probes;
  for (auto& result : results) probes.push_back(result.get());  // every one initialized
  auto items = items_per_process(probes);
  EXPECT_GE(items.size(), 10u) << "100 tasks, at most 10 per process";
  for (const auto& [pid, count] : items) EXPECT_LE(count, 10) << "process " << pid;
  for (const auto& [pid, count] : probes) EXPECT_LE(count, 10) << "process " << pid;
}

TEST(PoolMaxtasksperchild, CountsChunksAsPythonDoes) {
  fiber::Pool pool(
      {.processes = 2, .initializer = fiber::call(initialize_probe), .maxtasksperchild = 2});
  std::vector<int> inputs(60, 0);
  auto probes = pool.map(lifetime_probe, inputs, 5);  // 12 chunks of 5
  auto items = items_per_process(probes);
  EXPECT_GE(items.size(), 6u) << "12 chunks, at most 2 per process";
  for (const auto& [pid, count] : probes) EXPECT_LE(count, 10) << "process " << pid;
}

TEST(PoolMaxtasksperchild, Invalid) {  // test_pool_maxtasksperchild_invalid
  // (Python's 0.5 and "12" do not compile here: the option is an int.)
  for (int value : {0, -1}) {
    EXPECT_THROW(fiber::Pool({.processes = 3, .maxtasksperchild = value}), std::invalid_argument)
        << value;
  }
  try {
    fiber::Pool pool({.processes = 1, .isolation = fiber::Isolation::none, .maxtasksperchild = 5});
    ADD_FAILURE() << "Isolation::none with maxtasksperchild was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("needs Isolation::process"), std::string::npos)
        << error.what();
  }
}

}  // namespace
