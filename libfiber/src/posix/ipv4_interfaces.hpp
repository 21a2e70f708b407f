// This host's network interfaces that are up with an IPv4 address (getifaddrs), in the system's
// order: what the queue broker chooses its published address from, and what a worker's doorbell
// tells the master it can be rung at.
#pragma once

#include <netinet/in.h>

#include <string>
#include <vector>

namespace fiber::posix {

struct Ipv4Interface {
  std::string name;
  in_addr address{};
  bool loopback = false;
};

// Empty if the system cannot list them.
std::vector<Ipv4Interface> ipv4_interfaces();

}  // namespace fiber::posix
