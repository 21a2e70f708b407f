#include "dispatch/broadcast_routes.hpp"

#include <gtest/gtest.h>

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
                                      {4, &spawn_1, "c"}};
  auto routes = route_broadcast(workers, kRelayMinBytes);
  ASSERT_EQ(routes.relayed.size(), 3u);
  EXPECT_EQ(routes.relayed[0].relay, 5);
  EXPECT_EQ(routes.relayed[0].siblings, (std::vector<int>{6}));
  EXPECT_EQ(routes.relayed[1].relay, 0);
  EXPECT_EQ(routes.relayed[1].siblings, (std::vector<int>{2}));
  EXPECT_EQ(routes.relayed[2].relay, 1);
  EXPECT_EQ(routes.relayed[2].siblings, (std::vector<int>{3}));
  // Alone on its host in its spawn: nobody to relay to.
  EXPECT_EQ(routes.direct, (std::vector<int>{4}));
}

TEST(BroadcastRoutes, BodiesTooLargeForOneMessageBetweenWorkersGoDirectly) {
  std::vector<RouteCandidate> workers{{0, &spawn_1, "a"}, {1, &spawn_1, "a"}};
  auto routes = route_broadcast(workers, kRelayMaxBytes + 1);
  EXPECT_EQ(routes.direct, (std::vector<int>{0, 1}));
  EXPECT_TRUE(routes.relayed.empty());
}

}  // namespace
}  // namespace fiber::detail
