#include "dispatch/broadcast_routes.hpp"

#include <algorithm>

namespace fiber::detail {

BroadcastRoutes route_broadcast(std::span<const RouteCandidate> workers, std::size_t body_bytes) {
  BroadcastRoutes routes;
  if (body_bytes < kRelayMinBytes || body_bytes > kRelayMaxBytes) {
    for (const auto& worker : workers) routes.direct.push_back(worker.id);
    return routes;
  }
  std::vector<const RouteCandidate*> group_of_relay;  // parallel to routes.relayed
  for (const auto& worker : workers) {
    auto group = std::find_if(group_of_relay.begin(), group_of_relay.end(), [&](const auto* r) {
      return r->spawn == worker.spawn && r->host == worker.host;
    });
    if (group == group_of_relay.end()) {
      group_of_relay.push_back(&worker);
      routes.relayed.push_back({worker.id, {}});
    } else {
      routes.relayed[static_cast<std::size_t>(group - group_of_relay.begin())].siblings.push_back(
          worker.id);
    }
  }
  // A group of one has nobody to relay to.
  for (const auto& route : routes.relayed) {
    if (route.siblings.empty()) routes.direct.push_back(route.relay);
  }
  std::erase_if(routes.relayed, [](const RelayRoute& route) { return route.siblings.empty(); });
  return routes;
}

}  // namespace fiber::detail
