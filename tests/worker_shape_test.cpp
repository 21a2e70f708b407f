// What each worker of a pool needs (fiber::WorkerShape), on this machine (real processes, CTest
// sets FIBER_GPUS=3,5 so that the machine declares two devices): bad shapes refused at the call,
// cores bound, none shared, and told to thread pools, devices given out one worker each, a task
// process over its memory limit ended alone and named, parked workers kept for their shape.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/shape_tasks.hpp"
#include "support/tasks.hpp"

namespace {

using fiber_test::numbers_in;
using fiber_test::seen_by_each_worker;
using fiber_test::seen_by_task;
using enum fiber_test::Seen;

constexpr std::uint64_t kMiB = 1 << 20;
// Long enough that each idle worker of a pool takes one item of a map before any is free again.
constexpr int kHoldMs = 300;
// Well past the quiet time after which a parked worker forks its standby task process (10 ms).
constexpr auto kStandbyForms = std::chrono::milliseconds(200);

TEST(WorkerShape, BadShapesAreRefusedAtTheCall) {
  EXPECT_THROW(fiber::Pool({.processes = 1, .shape = {.cores = -1}}), std::invalid_argument);
  EXPECT_THROW(fiber::Pool({.processes = 1, .shape = {.gpus = -2}}), std::invalid_argument);
  fiber::Process process(fiber_test::square, 3);
  process.with_shape({.cores = -4});
  EXPECT_THROW(process.start(), std::invalid_argument);
}

TEST(WorkerShape, EachWorkerIsBoundToCoresOfItsOwnAndToldHowMany) {
  fiber::Pool pool({.processes = 2, .shape = {.cores = 1}});
  std::set<int> bound;
  for (const auto& seen : seen_by_each_worker(pool, kHoldMs)) {
    auto cpus = numbers_in(seen[kTaskCpus]);
    EXPECT_EQ(cpus.size(), 1u) << seen[kTaskCpus];
    EXPECT_EQ(seen[kWorkerCpus], seen[kTaskCpus]) << "the worker and its task process";
    EXPECT_EQ(seen[kThreads], "1");
    bound.insert(cpus.begin(), cpus.end());
  }
  EXPECT_EQ(bound.size(), 2u) << "two workers on one core";
}

TEST(WorkerShape, AWorkerOfTwoCoresHasBothAndItsThreadPoolsKnow) {
  fiber::Pool pool({.processes = 1, .shape = {.cores = 2}});
  auto seen = seen_by_each_worker(pool, kHoldMs);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(numbers_in(seen[0][kTaskCpus]).size(), 2u) << seen[0][kTaskCpus];
  EXPECT_EQ(seen[0][kThreads], "2");
}

TEST(WorkerShape, MoreCoresThanTheMachineHasIsOneSpawnErrorNamingThem) {
  try {
    fiber::Pool pool({.processes = 1, .shape = {.cores = 64}});
    ADD_FAILURE() << "a worker of 64 cores started";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("a worker needs 64"), std::string::npos)
        << error.what();
  }
  fiber::Pool pool({.processes = 1});  // the runtime goes on
  EXPECT_EQ(pool.apply(fiber_test::square, 6), 36);
}

TEST(WorkerShape, EachWorkerGetsDevicesOfItsOwn) {
  fiber::Pool pool({.processes = 2, .shape = {.gpus = 1}});
  std::set<std::string> devices;
  for (const auto& seen : seen_by_each_worker(pool, kHoldMs)) devices.insert(seen[kDevices]);
  EXPECT_EQ(devices, (std::set<std::string>{"3", "5"}));
  // Both devices are held while this pool holds its workers: a third worker has none.
  try {
    fiber::Pool more({.processes = 1, .shape = {.gpus = 1}});
    ADD_FAILURE() << "a worker started without a device of its own";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("0 of its 2 GPUs free, a worker needs 1"),
              std::string::npos)
        << error.what();
  }
}

TEST(WorkerShape, MoreDevicesThanTheNodeHasIsOneSpawnErrorNamingThem) {
  try {
    fiber::Pool pool({.processes = 1, .shape = {.gpus = 3}});
    ADD_FAILURE() << "a worker of 3 devices started";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("2 of its 2 GPUs free, a worker needs 3"),
              std::string::npos)
        << error.what();
  }
}

TEST(WorkerShape, ATaskProcessOverItsMemoryLimitEndsAloneNamingIt) {
  fiber::Pool pool({.processes = 1, .max_retries = 0, .shape = {.memory_bytes = 256 * kMiB}});
  EXPECT_EQ(pool.apply(fiber_test::fill_bytes, 16 * kMiB), 16 * kMiB);
  long worker = pool.workers().at(0).pid;
  try {
    pool.apply(fiber_test::fill_bytes, 1024 * kMiB);
    ADD_FAILURE() << "1 GiB filled under a limit of 256 MiB";
  } catch (const fiber::WorkerLost& error) {
    EXPECT_NE(std::string(error.what()).find("over its memory limit of 268435456 bytes"),
              std::string::npos)
        << error.what();
  }
  // Only the task process ended: the same worker runs the next task in a new one.
  EXPECT_EQ(pool.apply(fiber_test::fill_bytes, 16 * kMiB), 16 * kMiB);
  EXPECT_EQ(pool.workers().at(0).pid, worker);
}

TEST(WorkerShape, ParkedWorkersGoOnlyToPoolsOfTheirShape) {
  std::set<long> bound_workers;
  {
    fiber::Pool pool({.processes = 2, .shape = {.cores = 1}});
    for (const auto& worker : pool.workers()) bound_workers.insert(worker.pid);
  }
  {
    fiber::Pool plain({.processes = 2});
    for (const auto& worker : plain.workers()) EXPECT_FALSE(bound_workers.contains(worker.pid));
    auto seen = seen_by_each_worker(plain, kHoldMs);
    for (const auto& one : seen) EXPECT_EQ(one[kThreads], "-");  // told nothing
  }
  // Parked and quiet, the workers fork standby task processes (before they know their next
  // cores): the next pool of the shape must not run in them.
  std::this_thread::sleep_for(kStandbyForms);
  fiber::Pool again({.processes = 2, .shape = {.cores = 1}});
  std::set<long> taken_back;
  for (const auto& worker : again.workers()) taken_back.insert(worker.pid);
  EXPECT_EQ(taken_back, bound_workers) << "the parked workers of that shape, not new ones";
  std::set<int> bound;
  for (const auto& seen : seen_by_each_worker(again, kHoldMs)) {
    EXPECT_EQ(seen[kTaskCpus], seen[kWorkerCpus]) << "a task process bound elsewhere";
    EXPECT_EQ(numbers_in(seen[kTaskCpus]).size(), 1u) << seen[kTaskCpus];
    bound.merge(numbers_in(seen[kTaskCpus]));
  }
  EXPECT_EQ(bound.size(), 2u) << "two workers on one core";
}

TEST(WorkerShape, AParkedWorkerGivenOtherCoresRunsItsTasksOnThem) {
  const fiber::WorkerShape one_core{.cores = 1};
  long first = 0;
  std::string first_cpus;
  {
    fiber::Pool pool({.processes = 1, .shape = one_core});
    auto seen = seen_by_each_worker(pool, kHoldMs);
    first = std::stol(seen.at(0)[kWorkerPid]);
    first_cpus = seen.at(0)[kTaskCpus];
  }
  std::this_thread::sleep_for(kStandbyForms);  // its standby forms, bound to first_cpus
  // Another shape takes that core meanwhile (the parked worker holds none)...
  fiber::Pool other({.processes = 1, .shape = {.cores = 1, .memory_bytes = 512 * kMiB}});
  EXPECT_EQ(seen_by_each_worker(other, kHoldMs).at(0)[kTaskCpus], first_cpus);
  // ...so the parked worker, taken back, is given the other core, and runs its tasks there.
  fiber::Pool again({.processes = 1, .shape = one_core});
  ASSERT_EQ(again.workers().at(0).pid, first);
  auto seen = seen_by_each_worker(again, kHoldMs).at(0);
  EXPECT_NE(seen[kWorkerCpus], first_cpus);
  EXPECT_EQ(seen[kTaskCpus], seen[kWorkerCpus]) << "its task process was bound before";
}

TEST(WorkerShape, AnActorPoolAndALearnerPoolRunAtOnce) {
  fiber::Pool actors({.processes = 2});
  fiber::Pool learners({.processes = 1, .shape = {.cores = 2, .memory_bytes = 512 * kMiB}});
  std::vector<int> holds(2, kHoldMs);
  auto acted = actors.map_async(seen_by_task, holds, 1);
  auto learned = learners.map_async(seen_by_task, std::vector<int>{kHoldMs}, 1);
  for (const auto& seen : acted.get()) EXPECT_EQ(seen[kThreads], "-");  // told nothing
  auto learner = learned.get();
  ASSERT_EQ(learner.size(), 1u);
  EXPECT_EQ(learner[0][kThreads], "2");
  EXPECT_EQ(numbers_in(learner[0][kTaskCpus]).size(), 2u) << learner[0][kTaskCpus];
  // Only the learner's task process is limited.
  EXPECT_THROW(learners.apply(fiber_test::fill_bytes, 1024 * kMiB), fiber::WorkerLost);
  EXPECT_EQ(actors.apply(fiber_test::fill_bytes, 1024 * kMiB), 1024 * kMiB);
}

}  // namespace
