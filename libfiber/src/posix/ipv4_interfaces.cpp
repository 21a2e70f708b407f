#include "posix/ipv4_interfaces.hpp"

#include <ifaddrs.h>
#include <net/if.h>

namespace fiber::posix {

std::vector<Ipv4Interface> ipv4_interfaces() {
  std::vector<Ipv4Interface> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (ifaddrs* at = list; at; at = at->ifa_next) {
    if (!at->ifa_addr || at->ifa_addr->sa_family != AF_INET || !(at->ifa_flags & IFF_UP)) continue;
    found.push_back({at->ifa_name, reinterpret_cast<const sockaddr_in*>(at->ifa_addr)->sin_addr,
                     (at->ifa_flags & IFF_LOOPBACK) != 0});
  }
  ::freeifaddrs(list);
  return found;
}

}  // namespace fiber::posix
