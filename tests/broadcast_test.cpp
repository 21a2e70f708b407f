// Pool::broadcast: a large broadcast reaches every worker through a relay per node group (one
// spawn on one host here), also workers that join later and the siblings of a relay killed
// before it could forward it; a broadcast that fails on a worker fails the calls after it.
// (tests/multinode_test.cpp: the same over several nodes.)
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <signal.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "support/broadcast_tasks.hpp"

void refuse_parameters(int) { throw std::runtime_error("parameters out of range"); }
FIBER_TASK(refuse_parameters);

namespace {

using namespace fiber_test;

std::vector<int> all(int generation) { return std::vector<int>(60, generation); }

TEST(Broadcast, LargeOneReachesEveryWorkerAndNewcomers) {
  fiber::Pool pool({.processes = 4});
  pool.broadcast(set_parameters, 1, parameters_of(1));
  EXPECT_EQ(held_by_every_worker(pool), all(1));
  pool.broadcast(set_parameters, 2, parameters_of(2));
  pool.resize(6);  // the newcomers get generation 2 from the master
  EXPECT_EQ(held_by_every_worker(pool), all(2));
  pool.broadcast(set_parameters, 3, parameters_of(3));
  EXPECT_EQ(held_by_every_worker(pool), all(3));
}

TEST(Broadcast, SiblingsOfAKilledRelayGetItFromTheMaster) {
  fiber::Pool pool({.processes = 4, .worker_timeout = std::chrono::seconds(1)});
  pool.broadcast(set_parameters, 1, parameters_of(1));
  EXPECT_EQ(held_by_every_worker(pool), all(1));
  // The pool's first worker relays for the others of its spawn: dead before the next broadcast,
  // it forwards nothing.
  ASSERT_EQ(kill(static_cast<pid_t>(pool.workers().front().pid), SIGKILL), 0);
  pool.broadcast(set_parameters, 2, parameters_of(2));
  // Through a lane (docs/design.md, "The lane") the killed worker's task process may outlive it
  // long enough to take the broadcast: the worker is then idle, and taken for lost only once it
  // holds work that nobody answers. Every item still holds the new parameters.
  EXPECT_EQ(held_by_the_pool(pool), all(2));
  wait_for_losses(pool, 1);
  EXPECT_EQ(held_by_every_worker(pool), all(2));
  EXPECT_EQ(pool.size(), 4);
  EXPECT_EQ(pool.stats().tasks_failed, 0u);
}

TEST(Broadcast, OneThatFailsFailsTheCallsAfterItUntilTheNext) {
  fiber::Pool pool({.processes = 3});
  pool.broadcast(refuse_parameters, 1);  // returns at once: nobody waits for the workers
  try {
    held_by_every_worker(pool);
    ADD_FAILURE() << "a map after a failed broadcast succeeded";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.message(), "parameters out of range");
  }
  EXPECT_THROW(pool.apply(held_generation, 0), fiber::TaskError);  // and later ones
  pool.broadcast(set_parameters, 4, parameters_of(4));
  EXPECT_EQ(held_by_every_worker(pool), all(4));
}

}  // namespace
