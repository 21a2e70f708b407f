#include "broadcast_tasks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <thread>

namespace fiber_test {
namespace {

constexpr int kItems = 60;
constexpr auto kItemTime = std::chrono::milliseconds(5);
constexpr auto kLossDeadline = std::chrono::seconds(30);
constexpr auto kLossPoll = std::chrono::milliseconds(10);
// How long held_by_every_worker maps again until every worker ran an item: a worker that joined a
// moment before (its task process starting, the broadcasts replayed to it) may get none of a short
// map's items, more often on simulated nodes whose daemons run in sessions of their own.
constexpr auto kEveryWorkerDeadline = std::chrono::seconds(10);

// What this task process last got by broadcast.
int generation = -1;
double checksum = 0;

double sum(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

}  // namespace

std::vector<double> parameters_of(int g) {
  std::vector<double> values(kParameterCount);
  std::iota(values.begin(), values.end(), static_cast<double>(g));
  return values;
}

void set_parameters(int g, const std::vector<double>& values) {
  generation = g;
  checksum = sum(values);
}

std::pair<long, int> held_generation(int) {
  std::this_thread::sleep_for(kItemTime);
  bool whole = checksum == sum(parameters_of(generation));
  return {fiber::this_worker().pid, whole ? generation : -1};
}

std::vector<int> held_by_the_pool(fiber::Pool& pool) {
  std::vector<int> generations;
  for (auto [pid, held] : pool.map(held_generation, std::vector<int>(kItems), 1)) {
    generations.push_back(held);
  }
  return generations;
}

std::vector<int> held_by_every_worker(fiber::Pool& pool) {
  std::vector<int> generations;
  std::set<long> ran_on;
  auto every_worker_ran = [&] {
    auto workers = pool.workers();
    return std::all_of(workers.begin(), workers.end(), [&](const fiber::WorkerInfo& worker) {
      return ran_on.contains(worker.pid);
    });
  };
  for (auto [pid, held] : pool.map(held_generation, std::vector<int>(kItems), 1)) {
    ran_on.insert(pid);
    generations.push_back(held);
  }
  // Later maps only reach the workers the first missed; what each holds must be the same.
  auto deadline = std::chrono::steady_clock::now() + kEveryWorkerDeadline;
  while (!every_worker_ran() && std::chrono::steady_clock::now() < deadline) {
    for (auto [pid, held] : pool.map(held_generation, std::vector<int>(kItems), 1)) {
      ran_on.insert(pid);
      EXPECT_EQ(held, generations.front()) << "worker process " << pid;
    }
  }
  for (const auto& worker : pool.workers()) {
    EXPECT_TRUE(ran_on.contains(worker.pid)) << "worker " << worker.id << " ran no item";
  }
  return generations;
}

void wait_for_losses(fiber::Pool& pool, std::uint64_t count) {
  auto deadline = std::chrono::steady_clock::now() + kLossDeadline;
  while (pool.stats().workers_lost < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kLossPoll);
  }
  ASSERT_EQ(pool.stats().workers_lost, count);
}

void wait_for_workers(fiber::Pool& pool, int count) {
  auto deadline = std::chrono::steady_clock::now() + kLossDeadline;
  while (pool.stats().workers != count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kLossPoll);
  }
  ASSERT_EQ(pool.stats().workers, count);
}

}  // namespace fiber_test

FIBER_TASK(fiber_test::set_parameters);
FIBER_TASK(fiber_test::held_generation);
