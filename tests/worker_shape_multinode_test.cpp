// Worker shapes on the simulated nodes (tests/multinode/run.sh: nodeA..nodeC, 2 slots each, each
// node's processes seeing the machine's 2 cores), one case per job so that each has the nodes'
// slots to itself (CTest: multinode_worker_shape_cores, multinode_worker_shape_gpus, the second
// with FIBER_GPUS='nodeA=0 nodeB=0,1 nodeC=2': devices declared per node, there is no GPU here;
// multinode_worker_shape_two_at_once; multinode_alternating_stages).
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

// Two shapes at once on the nodes: a learner pool of one worker of 2 cores and 512 MiB (a node's
// 2 slots) beside an actor pool of 3 unbound workers (the other 3 slots). The learner's task
// process has both cores of its node and a memory limit; the actors' have neither.
TEST(MultiNodeShape, TwoShapesAtOnceAnActorPoolBesideALearnerPool) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  fiber::Pool learners({.processes = 1, .shape = {.cores = 2, .memory_bytes = 512 * kMiB}});
  fiber::Pool actors({.processes = 3});
  auto acted = actors.map_async(seen_by_task, std::vector<int>(3, kHoldMs), 1);
  auto learned = learners.map_async(seen_by_task, std::vector<int>{kHoldMs}, 1).get();
  ASSERT_EQ(learned.size(), 1u);
  const auto& learner = learned[0];
  EXPECT_EQ(numbers_in(learner[kTaskCpus]).size(), 2u) << learner[kTaskCpus];
  EXPECT_EQ(learner[kThreads], "2");
  std::set<std::string> actor_hosts;
  for (const auto& seen : acted.get()) {
    EXPECT_EQ(seen[kThreads], "-") << seen[kHost] << ": an actor is told nothing";
    actor_hosts.insert(seen[kHost]);
  }
  EXPECT_FALSE(actor_hosts.contains(learner[kHost])) << "the learner's node has no slot left";
  // Only the learner's task process is limited.
  EXPECT_THROW(learners.apply(fiber_test::fill_bytes, 1024 * kMiB), fiber::WorkerLost);
  EXPECT_EQ(actors.apply(fiber_test::fill_bytes, 1024 * kMiB), 1024 * kMiB);
}

// Stages that alternate narrow and wide workers within the nodes' 6 slots: 5 one-core workers
// (nodeA 1, beside the master; nodeB and nodeC 2 each), then 2 two-core workers, made of the
// parked one-core ones (docs/design.md, "Parked workers lend their slots"): one of nodeB's and one
// of nodeC's is re-shaped, its node's other lends it its slot; nodeA's one slot takes none. Each
// stage gets its shape, and none spawns after the first: every worker is one of the first five.
TEST(MultiNodeShape, StagesAlternateOneCoreAndTwoCoreWorkersOnTheSameProcesses) {
  constexpr int kStageChanges = 4;
  std::set<long> first;  // the pids of the first stage's workers
  for (int change = 0; change <= kStageChanges; ++change) {
    SCOPED_TRACE("stage " + std::to_string(change));
    {
      fiber::Pool actors({.processes = 5, .shape = {.cores = 1}});
      std::map<std::string, int> workers_on;
      for (const auto& seen : seen_by_each_worker(actors, kHoldMs)) {
        EXPECT_EQ(numbers_in(seen[kWorkerCpus]).size(), 1u)
            << seen[kHost] << ": " << seen[kWorkerCpus];
        EXPECT_EQ(seen[kTaskCpus], seen[kWorkerCpus]) << "the worker and its task process";
        EXPECT_EQ(seen[kThreads], "1");
        ++workers_on[seen[kHost]];
        long pid = std::stol(seen[kWorkerPid]);
        if (change == 0) first.insert(pid);
        EXPECT_TRUE(first.contains(pid)) << "worker " << pid << " was spawned for this stage";
      }
      EXPECT_EQ(workers_on, (std::map<std::string, int>{{"nodeA", 1}, {"nodeB", 2}, {"nodeC", 2}}));
      EXPECT_EQ(actors.stats().parked_workers, 0);
    }
    fiber::Pool learners({.processes = 2, .shape = {.cores = 2}});
    std::set<std::string> hosts;
    for (const auto& seen : seen_by_each_worker(learners, kHoldMs)) {
      EXPECT_EQ(numbers_in(seen[kWorkerCpus]).size(), 2u)
          << seen[kHost] << ": " << seen[kWorkerCpus];
      EXPECT_EQ(seen[kTaskCpus], seen[kWorkerCpus]) << "the worker and its task process";
      EXPECT_EQ(seen[kThreads], "2");
      hosts.insert(seen[kHost]);
      EXPECT_TRUE(first.contains(std::stol(seen[kWorkerPid])))
          << "worker " << seen[kWorkerPid] << " was spawned for this stage";
    }
    EXPECT_EQ(hosts, (std::set<std::string>{"nodeB", "nodeC"}));
    // nodeA's worker, and the two lending their slots, asleep.
    EXPECT_EQ(learners.stats().parked_workers, 3);
  }
  EXPECT_EQ(first.size(), 5u);
}

}  // namespace
