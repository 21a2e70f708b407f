#include "queue/reachable_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <vector>

#include "posix/ipv4_interfaces.hpp"
#include "this_process.hpp"

namespace fiber::detail {
namespace {

using Interface = posix::Ipv4Interface;

std::vector<std::string> split(const char* list) {
  std::vector<std::string> parts;
  std::istringstream in(list ? list : "");
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Whether an entry of an Open MPI interface list (a name, or a subnet a.b.c.d/n) names `at`.
bool names(const std::string& entry, const Interface& at) {
  auto slash = entry.find('/');
  if (slash == std::string::npos) return entry == at.name;
  in_addr subnet{};
  if (::inet_pton(AF_INET, entry.substr(0, slash).c_str(), &subnet) != 1) return false;
  int bits = std::atoi(entry.c_str() + slash + 1);
  if (bits <= 0) return true;
  if (bits > 32) return false;
  std::uint32_t mask = bits == 32 ? ~0u : ~(~0u >> bits);
  return (ntohl(subnet.s_addr) & mask) == (ntohl(at.address.s_addr) & mask);
}

bool named_in(const std::vector<std::string>& list, const Interface& at) {
  for (const auto& entry : list) {
    if (names(entry, at)) return true;
  }
  return false;
}

// The first non-empty one of these MCA settings, as a list.
std::vector<std::string> setting(const char* first, const char* second) {
  auto list = split(std::getenv(first));
  return list.empty() ? split(std::getenv(second)) : list;
}

std::optional<in_addr> chosen_address() {
  auto all = posix::ipv4_interfaces();
  // The out-of-band channel first: it is how the nodes' daemons, and so the workers, reached
  // this one.
  auto include = setting("OMPI_MCA_oob_tcp_if_include", "OMPI_MCA_btl_tcp_if_include");
  if (!include.empty()) {
    for (const auto& at : all) {
      if (named_in(include, at)) return at.address;
    }
    return std::nullopt;
  }
  auto exclude = setting("OMPI_MCA_oob_tcp_if_exclude", "OMPI_MCA_btl_tcp_if_exclude");
  for (const auto& at : all) {
    if (!at.loopback && !named_in(exclude, at)) return at.address;
  }
  for (const auto& at : all) {
    if (at.loopback) return at.address;  // a host alone: nothing else reaches it anyway
  }
  return std::nullopt;
}

std::string address_text() {
  auto address = chosen_address();
  if (!address) return this_process().host;
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &*address, text, sizeof text);
  return text;
}

}  // namespace

const std::string& reachable_address() {
  static const std::string address = address_text();
  return address;
}

}  // namespace fiber::detail
