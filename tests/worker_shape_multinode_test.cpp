// Worker shapes on the simulated nodes (tests/multinode/run.sh: nodeA..nodeC, 2 slots each, each
// node's processes seeing the machine's 2 cores), one case per job so that each has the nodes'
// slots to itself (CTest: multinode_worker_shape_cores, multinode_worker_shape_gpus, the second
// with FIBER_GPUS='nodeA=0 nodeB=0,1 nodeC=2': devices declared per node, there is no GPU here).
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/shape_tasks.hpp"

namespace {

using fiber_test::numbers_in;
using fiber_test::seen_by_each_worker;
using fiber_test::seen_by_task;
using enum fiber_test::Seen;

// Long enough that each idle worker of a pool takes one item of a map before any is free again.
constexpr int kHoldMs = 500;

TEST(MultiNodeShape, CoresEachWorkerOfANodeIsBoundToACoreOfItsOwn) {
  // Every slot the nodes have left (nodeA's other one is the master's).
  fiber::Pool pool({.processes = 5, .shape = {.cores = 1}});
  std::map<std::string, std::set<int>> bound_on;  // host -> the cores its workers have
  std::map<std::string, int> workers_on;
  for (const auto& seen : seen_by_each_worker(pool, kHoldMs)) {
    auto cpus = numbers_in(seen[kTaskCpus]);
    EXPECT_EQ(cpus.size(), 1u) << seen[kHost] << ": " << seen[kTaskCpus];
    EXPECT_EQ(seen[kWorkerCpus], seen[kTaskCpus]) << "the worker and its task process";
    EXPECT_EQ(seen[kThreads], "1");
    for (int cpu : cpus) {
      EXPECT_TRUE(bound_on[seen[kHost]].insert(cpu).second)
          << "core " << cpu << " of " << seen[kHost] << " is shared";
    }
    ++workers_on[seen[kHost]];
  }
  EXPECT_EQ(workers_on, (std::map<std::string, int>{{"nodeA", 1}, {"nodeB", 2}, {"nodeC", 2}}));
}

TEST(MultiNodeShape, GpusEachWorkerGetsDevicesOfItsNodeNoneShared) {
  fiber::Pool pool({.processes = 3, .shape = {.gpus = 1}});
  const std::map<std::string, std::set<int>> declared{
      {"nodeA", {0}}, {"nodeB", {0, 1}}, {"nodeC", {2}}};
  std::map<std::string, std::set<int>> given_on;
  for (const auto& seen : seen_by_each_worker(pool, kHoldMs)) {
    auto devices = numbers_in(seen[kDevices]);
    ASSERT_EQ(devices.size(), 1u) << seen[kHost] << ": " << seen[kDevices];
    int device = *devices.begin();
    EXPECT_TRUE(declared.at(seen[kHost]).contains(device))
        << seen[kHost] << " has no device " << device;
    EXPECT_TRUE(given_on[seen[kHost]].insert(device).second)
        << "device " << device << " of " << seen[kHost] << " is shared";
  }
  // nodeC, where the next slot is, has one device: a worker of two cannot start there.
  try {
    fiber::Pool wide({.processes = 1, .shape = {.gpus = 2}});
    ADD_FAILURE() << "a worker of 2 devices started";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("nodeC has 1 of its 1 GPUs free, a worker needs 2"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(pool.map(seen_by_task, std::vector<int>{0, 0}).size(), 2u);  // the pool goes on
}

}  // namespace
