// How a broadcast reaches a pool's workers: a large one crosses the network once per node. The
// workers of one spawn on one host are a node group; the master sends the body to one of them
// (the relay), which forwards it to its siblings over their spawn's communicator, while the
// siblings get only a small stand-in from the master, so that the broadcast keeps its place among
// their messages. Small bodies, single workers and bodies too large for one MPI message go
// directly. Pure logic: the worker set does the sending (worker_set.cpp).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace fiber::detail {

// Below this a body goes to every worker directly: relaying it would add a hop to save little.
inline constexpr std::size_t kRelayMinBytes = std::size_t{64} * 1024;
// A relayed body travels as one MPI message between workers (an int count of bytes).
inline constexpr std::size_t kRelayMaxBytes = std::size_t{1} << 30;

struct RouteCandidate {
  int id;
  const void* spawn;  // which spawn the worker came from (workers of one spawn can talk)
  std::string_view host;
};

struct RelayRoute {
  int relay;
  std::vector<int> siblings;
};

struct BroadcastRoutes {
  std::vector<int> direct;
  std::vector<RelayRoute> relayed;
};

// Routes for a body of `body_bytes` to `workers` (in the pool's order; each group's first is its
// relay).
BroadcastRoutes route_broadcast(std::span<const RouteCandidate> workers, std::size_t body_bytes);

}  // namespace fiber::detail
