#include "dispatch/broadcast_routes.hpp"

#include <algorithm>

namespace fiber::detail {
namespace {

void append_hops(const RelayRoute& route, std::vector<RouteHop>& hops) {
  for (int sibling : route.siblings) hops.push_back({sibling, 0});
  for (const auto& next : route.onward) {
    std::size_t at = hops.size();
    hops.push_back({next.relay, 0});
    append_hops(next, hops);
    hops[at].descendants = static_cast<std::uint32_t>(hops.size() - at - 1);
  }
}

void append_relays(const RelayRoute& route, std::vector<const RelayRoute*>& relays) {
  relays.push_back(&route);
  for (const auto& next : route.onward) append_relays(next, relays);
}

// The groups of one spawn as a forest: the first kRelayFanout are the roots, and group j's
// onward groups are kRelayFanout (j + 1) .. kRelayFanout (j + 1) + kRelayFanout - 1.
std::vector<RelayRoute> as_tree(std::vector<RelayRoute> groups) {
  for (std::size_t j = groups.size(); j-- > 0;) {
    std::size_t first = kRelayFanout * (j + 1);
    for (std::size_t c = first; c < std::min(groups.size(), first + kRelayFanout); ++c) {
      groups[j].onward.push_back(std::move(groups[c]));
    }
  }
  groups.resize(std::min(groups.size(), kRelayFanout));
  return groups;
}

}  // namespace

BroadcastRoutes route_broadcast(std::span<const RouteCandidate> workers, std::size_t body_bytes) {
  BroadcastRoutes routes;
  if (body_bytes < kRelayMinBytes || body_bytes > kRelayMaxBytes) {
    for (const auto& worker : workers) routes.direct.push_back(worker.id);
    return routes;
  }
  // Groups by spawn, in the order of their first workers.
  std::vector<const void*> spawns;
  std::vector<std::vector<RelayRoute>> groups_of_spawn;
  std::vector<std::vector<std::string_view>> hosts_of_spawn;
  for (const auto& worker : workers) {
    auto spawn = std::find(spawns.begin(), spawns.end(), worker.spawn) - spawns.begin();
    if (spawn == static_cast<std::ptrdiff_t>(spawns.size())) {
      spawns.push_back(worker.spawn);
      groups_of_spawn.emplace_back();
      hosts_of_spawn.emplace_back();
    }
    auto& hosts = hosts_of_spawn[spawn];
    auto& groups = groups_of_spawn[spawn];
    auto host = std::find(hosts.begin(), hosts.end(), worker.host) - hosts.begin();
    if (host == static_cast<std::ptrdiff_t>(hosts.size())) {
      hosts.push_back(worker.host);
      groups.push_back({worker.id, {}, {}});
    } else {
      groups[host].siblings.push_back(worker.id);
    }
  }
  for (auto& groups : groups_of_spawn) {
    for (auto& root : as_tree(std::move(groups))) {
      // Alone on its host in its spawn, with no relay after it: nobody to relay to.
      if (root.siblings.empty() && root.onward.empty()) {
        routes.direct.push_back(root.relay);
      } else {
        routes.relayed.push_back(std::move(root));
      }
    }
  }
  return routes;
}

std::vector<RouteHop> route_hops(const RelayRoute& route) {
  std::vector<RouteHop> hops;
  append_hops(route, hops);
  return hops;
}

std::vector<int> route_members(const RelayRoute& route) {
  std::vector<int> members;
  for (const auto& hop : route_hops(route)) members.push_back(hop.worker);
  return members;
}

std::vector<const RelayRoute*> route_relays(const RelayRoute& route) {
  std::vector<const RelayRoute*> relays;
  append_relays(route, relays);
  return relays;
}

}  // namespace fiber::detail
