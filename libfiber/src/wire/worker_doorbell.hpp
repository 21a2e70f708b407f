// How the master wakes a worker that sleeps for want of work (docs/design.md, "Idle workers
// sleep"). MPI has no wait that sleeps (a blocking receive over UCX spins, yield_when_idle only
// yields), so an idle worker sleeps in poll on a UDP socket of its own, the doorbell, and looks
// at MPI only when it rings or a long nap has passed. It says in its hello which port and which
// addresses; the master sends a datagram there when it sends that worker a message after a quiet
// spell (Channel::ring_when_quiet), when the worker may be asleep. UDP because it crosses nodes,
// needs no connection per worker, and a datagram lost or sent to a dead worker costs nothing:
// the worker still looks at MPI after each nap.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "posix/unique_fd.hpp"

namespace fiber::detail {

// The worker's end: a UDP socket on every interface, at a port the system picks.
class WorkerDoorbell {
 public:
  // No doorbell (port 0) if the socket cannot be made: the worker then naps briefly instead.
  WorkerDoorbell();
  // What to poll for a ring (-1: none).
  int fd() const { return socket_.get(); }
  std::uint16_t port() const { return port_; }
  // Takes every ring so far; true if there was one.
  bool answer() const;
  // This host's IPv4 addresses, dotted and space-separated, for the hello.
  static std::string host_addresses();

 private:
  posix::UniqueFd socket_;
  std::uint16_t port_ = 0;
};

// The master's end: where one worker's doorbell is, rung through one socket of this process.
class WorkerDoorbellRing {
 public:
  // At most this many of a worker's addresses are rung (a node with several networks).
  static constexpr std::size_t kMaxTargets = 4;

  // For a worker that said `port` and `addresses` in its hello; none if it has no doorbell. A
  // worker on the master's host, or whose every address is the master's own (another network
  // namespace's host name on one machine: the simulated nodes), is rung on the loopback; another
  // is rung on each of its addresses the master does not have (a docker0 bridge has the same one
  // on every host).
  static std::optional<WorkerDoorbellRing> to(std::uint16_t port, std::string_view addresses,
                                              bool same_host);
  // Wakes the worker if it sleeps. Never blocks; failures are ignored (the worker naps anyway).
  void ring() const;

 private:
  std::vector<sockaddr_in> targets_;
};

}  // namespace fiber::detail
