#include "posix/tcp.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "fiber/errors.hpp"

namespace fiber::posix {
namespace {

constexpr int kListenBacklog = 128;

[[noreturn]] void fail(const std::string& who, const char* what) {
  throw Error("fiber: " + who + " cannot " + what + ": " + std::strerror(errno));
}

// connect(2), finished if a signal interrupts it (a Ctrl-C meant for the caller's wait): the
// connection goes on in the background, so this waits for it and reads its outcome. False and
// errno on failure.
bool connect_whole(int socket, const sockaddr* address, socklen_t length) {
  if (::connect(socket, address, length) == 0) return true;
  if (errno != EINTR) return false;
  pollfd ready{socket, POLLOUT, 0};
  int polled = 0;
  do {
    polled = ::poll(&ready, 1, -1);
  } while (polled < 0 && errno == EINTR);
  if (polled < 0) return false;
  int error = 0;
  socklen_t size = sizeof error;
  if (::getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &size) != 0) return false;
  errno = error;
  return error == 0;
}

// An abstract socket's address: a NUL, then the name (not NUL-terminated).
socklen_t local_address(const std::string& name, sockaddr_un& address) {
  address = {};
  address.sun_family = AF_UNIX;
  std::size_t length = std::min(name.size(), sizeof address.sun_path - 1);
  std::memcpy(address.sun_path + 1, name.data(), length);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
}

}  // namespace

UniqueFd listen_local(const std::string& name, const std::string& who) {
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) fail(who, "open a local socket");
  sockaddr_un address;
  socklen_t length = local_address(name, address);
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
    fail(who, "bind its local socket");
  }
  if (::listen(listener.get(), kListenBacklog) != 0) fail(who, "listen");
  return listener;
}

UniqueFd connect_local(const std::string& name, std::string& why) {
  UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address;
  socklen_t length = local_address(name, address);
  if (!socket || !connect_whole(socket.get(), reinterpret_cast<sockaddr*>(&address), length)) {
    why = std::strerror(errno);
    return {};
  }
  return socket;
}

void no_delay(int socket) {
  int on = 1;
  ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

UniqueFd listen_tcp(std::uint16_t& port, const std::string& who) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) fail(who, "open a socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    fail(who, "bind its socket");
  }
  if (::listen(listener.get(), kListenBacklog) != 0) fail(who, "listen");
  socklen_t length = sizeof address;
  if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    fail(who, "read its port");
  }
  port = ntohs(address.sin_port);
  return listener;
}

UniqueFd connect_tcp(const std::string& host, std::uint16_t port, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int error = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (error != 0) {
    why = gai_strerror(error);
    return {};
  }
  UniqueFd socket;
  why = "no address";
  for (addrinfo* at = found; at && !socket; at = at->ai_next) {
    UniqueFd attempt(::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC, 0));
    if (attempt && connect_whole(attempt.get(), at->ai_addr, at->ai_addrlen)) {
      socket = std::move(attempt);
    } else {
      why = std::strerror(errno);
    }
  }
  ::freeaddrinfo(found);
  if (socket) no_delay(socket.get());
  return socket;
}

}  // namespace fiber::posix
