#include "dispatch/broadcast_routes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace fiber::detail {
namespace {

const int spawn_1 = 1, spawn_2 = 2;  // stand-ins for two spawns' groups

TEST(BroadcastRoutes, SmallBodiesGoDirectlyToEveryWorker) {
  std::vector<RouteCandidate> workers{{0, &spawn_1, "a"}, {1, &spawn_1, "a"}, {2, &spawn_1, "a"}};
  auto routes = route_broadcast(workers, kRelayMinBytes - 1);
  EXPECT_EQ(routes.direct, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(routes.relayed.empty());
}

TEST(BroadcastRoutes, OneRelayPerSpawnAndHostTheFirstInPoolOrder) {
  std::vector<RouteCandidate> workers{{5, &spawn_2, "a"}, {0, &spawn_1, "a"}, {1, &spawn_1, "b"},
                                      {2, &spawn_1, "a"}, {3, &spawn_1, "b"}, {6, &spawn_2, "a"},
                                      {4, &spawn_1, "c"}, {7, &spawn_2, "b"}};
  auto routes = route_broadcast(workers, kRelayMinBytes);
  ASSERT_EQ(routes.relayed.size(), 3u);
  EXPECT_EQ(routes.relayed[0].relay, 5);
  EXPECT_EQ(routes.relayed[0].siblings, (std::vector<int>{6}));
  EXPECT_EQ(routes.relayed[1].relay, 0);
  EXPECT_EQ(routes.relayed[1].siblings, (std::vector<int>{2}));
  EXPECT_EQ(routes.relayed[2].relay, 1);
  EXPECT_EQ(routes.relayed[2].siblings, (std::vector<int>{3}));
  // Alone on its host in its spawn, a third host: reached through its spawn's first root.
  ASSERT_EQ(routes.relayed[1].onward.size(), 1u);
  EXPECT_EQ(routes.relayed[1].onward[0].relay, 4);
  // Alone on its host and a root, with nobody after it: sent the body directly.
  EXPECT_EQ(routes.direct, (std::vector<int>{7}));
}

TEST(BroadcastRoutes, AWorkerAloneInItsSpawnGetsItDirectly) {
  std::vector<RouteCandidate> workers{{0, &spawn_1, "a"}, {1, &spawn_2, "a"}, {2, &spawn_2, "a"}};
  auto routes = route_broadcast(workers, kRelayMinBytes);
  EXPECT_EQ(routes.direct, (std::vector<int>{0}));
  ASSERT_EQ(routes.relayed.size(), 1u);
  EXPECT_EQ(routes.relayed[0].relay, 1);
}

// 9 hosts of 2 workers each in one spawn: the master sends the body to kRelayFanout relays,
// each relay to at most kRelayFanout others beyond its sibling, and every worker is reached once.
TEST(BroadcastRoutes, ATreeOverTheNodesOfASpawn) {
  static_assert(kRelayFanout == 2, "the shape below assumes a fan-out of 2");
  std::vector<std::string> hosts;
  for (int h = 0; h < 9; ++h) hosts.push_back("node" + std::to_string(h));
  std::vector<RouteCandidate> workers;
  for (int h = 0; h < 9; ++h) {
    for (int w = 0; w < 2; ++w) workers.push_back({2 * h + w, &spawn_1, hosts[h]});
  }
  auto routes = route_broadcast(workers, kRelayMinBytes);
  ASSERT_EQ(routes.relayed.size(), kRelayFanout);
  EXPECT_TRUE(routes.direct.empty());
  // Host j's onward hosts are 2 (j + 1) and 2 (j + 1) + 1: 0 -> 2, 3; 1 -> 4, 5; 2 -> 6, 7; 3 -> 8.
  const RelayRoute& first = routes.relayed[0];
  EXPECT_EQ(first.relay, 0);
  EXPECT_EQ(first.siblings, (std::vector<int>{1}));
  ASSERT_EQ(first.onward.size(), 2u);
  EXPECT_EQ(first.onward[0].relay, 4);                // host 2
  EXPECT_EQ(first.onward[1].relay, 6);                // host 3
  EXPECT_EQ(first.onward[1].onward.at(0).relay, 16);  // host 8
  // The hops in the order the relay forwards them: siblings, then each onward relay and its own.
  auto hops = route_hops(first);
  std::vector<int> order;
  for (const auto& hop : hops) order.push_back(hop.worker);
  EXPECT_EQ(order, (std::vector<int>{1, 4, 5, 12, 13, 14, 15, 6, 7, 16, 17}));
  EXPECT_EQ(hops[1].descendants, 5u);  // host 2's relay forwards to 5, 12, 13, 14, 15
  EXPECT_EQ(hops[2].descendants, 0u);
  EXPECT_EQ(hops[7].descendants, 3u);  // host 3's: 7, 16, 17
  std::vector<int> reached;
  for (const auto& route : routes.relayed) {
    reached.push_back(route.relay);
    for (int member : route_members(route)) reached.push_back(member);
    for (const RelayRoute* relay : route_relays(route)) {
      EXPECT_LE(relay->onward.size(), kRelayFanout);
    }
  }
  std::sort(reached.begin(), reached.end());
  std::vector<int> everyone(18);
  std::iota(everyone.begin(), everyone.end(), 0);
  EXPECT_EQ(reached, everyone);
}

TEST(BroadcastRoutes, BodiesTooLargeForOneMessageBetweenWorkersGoDirectly) {
  std::vector<RouteCandidate> workers{{0, &spawn_1, "a"}, {1, &spawn_1, "a"}};
  auto routes = route_broadcast(workers, kRelayMaxBytes + 1);
  EXPECT_EQ(routes.direct, (std::vector<int>{0, 1}));
  EXPECT_TRUE(routes.relayed.empty());
}

}  // namespace
}  // namespace fiber::detail
