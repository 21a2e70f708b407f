#include "wire/worker_doorbell.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <sstream>

#include "posix/ipv4_interfaces.hpp"

namespace fiber::detail {
namespace {

// A ring is one small datagram: the doorbell is drained this many at a time.
constexpr std::size_t kRingBytes = 16;

std::vector<in_addr_t> own_addresses() {
  std::vector<in_addr_t> addresses;
  for (const auto& interface : posix::ipv4_interfaces())
    addresses.push_back(interface.address.s_addr);
  return addresses;
}

bool loopback(in_addr_t address) { return (ntohl(address) >> 24) == IN_LOOPBACKNET; }

// The master's socket for every ring (made on the first).
int ring_socket() {
  static const posix::UniqueFd socket(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  return socket.get();
}

}  // namespace

WorkerDoorbell::WorkerDoorbell() {
  posix::UniqueFd socket(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  if (::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return;
  }
  socket_ = std::move(socket);
  port_ = ntohs(address.sin_port);
}

bool WorkerDoorbell::answer() const {
  if (!socket_) return false;
  char ring[kRingBytes];
  bool rung = false;
  while (::recv(socket_.get(), ring, sizeof ring, MSG_DONTWAIT) >= 0) rung = true;
  return rung;
}

std::string WorkerDoorbell::host_addresses() {
  std::string text;
  for (in_addr_t address : own_addresses()) {
    char dotted[INET_ADDRSTRLEN];
    in_addr in{address};
    if (!::inet_ntop(AF_INET, &in, dotted, sizeof dotted)) continue;
    if (!text.empty()) text += ' ';
    text += dotted;
  }
  return text;
}

std::optional<WorkerDoorbellRing> WorkerDoorbellRing::to(std::uint16_t port,
                                                         std::string_view addresses,
                                                         bool same_host) {
  if (port == 0 || ring_socket() < 0) return std::nullopt;
  std::vector<in_addr_t> chosen;
  bool only_ours = true;  // every address the worker has is the master's too
  if (!same_host) {
    const auto ours = own_addresses();
    std::istringstream words{std::string(addresses)};
    for (std::string word; words >> word;) {
      in_addr address{};
      if (::inet_pton(AF_INET, word.c_str(), &address) != 1 || loopback(address.s_addr)) continue;
      if (std::find(ours.begin(), ours.end(), address.s_addr) != ours.end()) continue;
      only_ours = false;
      if (chosen.size() < kMaxTargets) chosen.push_back(address.s_addr);
    }
  }
  if (same_host || only_ours) chosen = {htonl(INADDR_LOOPBACK)};
  WorkerDoorbellRing ring;
  for (in_addr_t address : chosen) {
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(port);
    target.sin_addr.s_addr = address;
    ring.targets_.push_back(target);
  }
  return ring;
}

void WorkerDoorbellRing::ring() const {
  const char rung = 1;
  for (const sockaddr_in& target : targets_) {
    [[maybe_unused]] auto sent =
        ::sendto(ring_socket(), &rung, 1, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&target),
                 sizeof target);
  }
}

}  // namespace fiber::detail
