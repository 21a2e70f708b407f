// How a broadcast reaches a pool's workers: a large one crosses the network once per node, and
// leaves the master at most kRelayFanout times. The workers of one spawn on one host are a node
// group; one of them (the relay) forwards the body to its siblings over their spawn's
// communicator, and to at most kRelayFanout other groups' relays of the spawn, which do the same
// (a tree over the spawn's nodes); the master sends the body to the first kRelayFanout relays
// only, and every other worker gets a small stand-in from it, so that the broadcast keeps its
// place among that worker's messages. Small bodies, single workers and bodies too large for one
// MPI message go directly. Pure logic: the worker set does the sending (worker_set.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace fiber::detail {

// Below this a body goes to every worker directly: relaying it would add a hop to save little.
inline constexpr std::size_t kRelayMinBytes = std::size_t{64} * 1024;
// A relayed body travels as one MPI message between workers (an int count of bytes).
inline constexpr std::size_t kRelayMaxBytes = std::size_t{1} << 30;
// The master, and each relay beyond its siblings, sends a body to at most this many relays: a
// node's link carries at most kRelayFanout + 1 copies, and a body crosses about
// log_kRelayFanout(nodes) links (at 10 Gb/s and 1.3 MB, 32 nodes: 5 hops of ~1 ms, against 32
// copies of ~1 ms each leaving the master one after the other).
inline constexpr std::size_t kRelayFanout = 2;

struct RouteCandidate {
  int id;
  const void* spawn;  // which spawn the worker came from (workers of one spawn can talk)
  std::string_view host;
};

struct RelayRoute {
  int relay;
  std::vector<int> siblings;       // on the relay's host, of its spawn
  std::vector<RelayRoute> onward;  // other hosts' relays of its spawn that it forwards to
};

struct BroadcastRoutes {
  std::vector<int> direct;
  std::vector<RelayRoute> relayed;  // the relays the master sends the body to
};

// One worker a relay forwards to, and how many of the hops after it are that worker's own to
// forward (0 for a sibling): a route's hops are its siblings, then each onward relay followed by
// its hops (the order of a Relay's route: wire/messages.hpp).
struct RouteHop {
  int worker;
  std::uint32_t descendants;
};

// Routes for a body of `body_bytes` to `workers` (in the pool's order; each group's first is its
// relay; the groups of a spawn, in the order of their first workers, form the tree breadth first).
BroadcastRoutes route_broadcast(std::span<const RouteCandidate> workers, std::size_t body_bytes);
std::vector<RouteHop> route_hops(const RelayRoute& route);
// The workers a route reaches through its relay (all its hops).
std::vector<int> route_members(const RelayRoute& route);
// The relays of a route: its own, then its onward ones', depth first.
std::vector<const RelayRoute*> route_relays(const RelayRoute& route);

}  // namespace fiber::detail
