// A pool on simulated nodes (tests/multinode/run.sh starts this under mpirun with a fake rsh
// launcher that gives each node its own hostname): workers land on more than one node.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <set>
#include <string>
#include <vector>

#include "support/tasks.hpp"

namespace {

TEST(MultiNode, WorkersSpreadOverSeveralNodes) {
  // The hostfile has nodeA..nodeC with 2 slots each; the master takes one on nodeA.
  ASSERT_EQ(fiber::this_worker().host, "nodeA") << "not running on the simulated nodes";
  fiber::Pool pool({.processes = 5});
  std::set<std::string> hosts;
  for (const auto& worker : pool.workers()) hosts.insert(worker.host);
  EXPECT_GE(hosts.size(), 2u);
  // Tasks really run there: each reports the host it ran on.
  std::set<std::string> ran_on;
  for (const auto& host : pool.map(fiber_test::where, std::vector<int>(200), 1)) {
    ran_on.insert(host);
  }
  EXPECT_EQ(ran_on, hosts);
  EXPECT_EQ(pool.map(fiber_test::square, std::vector<int>{1, 2, 3}), (std::vector<int>{1, 4, 9}));
}

}  // namespace
