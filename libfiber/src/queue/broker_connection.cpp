#include "queue/broker_connection.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "fiber/errors.hpp"
#include "posix/this_pid.hpp"
#include "posix/unique_fd.hpp"

namespace fiber::detail {
namespace {

struct BrokerConnection {
  pid_t pid = 0;
  posix::UniqueFd socket;
};

posix::UniqueFd connect_to(const QueueAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int error =
      ::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found);
  if (error != 0) broker_gone(address, gai_strerror(error));
  posix::UniqueFd socket;
  std::string why = "no address";
  for (addrinfo* at = found; at && !socket; at = at->ai_next) {
    posix::UniqueFd attempt(::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC, 0));
    if (attempt && ::connect(attempt.get(), at->ai_addr, at->ai_addrlen) == 0) {
      socket = std::move(attempt);
    } else {
      why = std::strerror(errno);
    }
  }
  ::freeaddrinfo(found);
  if (!socket) broker_gone(address, why);
  int on = 1;
  ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return socket;
}

}  // namespace

void made_in_the_master() {
  throw Error(
      "fiber: a queue is made in the master, with a live fiber::Runtime, and reaches tasks and "
      "Processes as an argument");
}

void broker_gone(const QueueAddress& address, const std::string& why) {
  throw Error("fiber: cannot reach the queue broker at " + address.host + ":" +
              std::to_string(address.port) + " (" + why + "); has the master's runtime ended?");
}

int broker_socket(const QueueAddress& address) {
  if (address.port == 0) made_in_the_master();
  thread_local std::map<std::pair<std::string, std::uint16_t>, BrokerConnection> connections;
  auto& connection = connections[{address.host, address.port}];
  if (connection.pid != posix::this_pid()) {
    connection.socket.release();  // the parent's: it stays open for the parent
    connection.socket = connect_to(address);
    connection.pid = posix::this_pid();
  }
  return connection.socket.get();
}

queue_wire::Bytes request_head(queue_wire::Operation operation, const QueueAddress& address,
                               QueueChannel::Timeout timeout) {
  auto request = queue_wire::frame();
  queue_wire::append(request, static_cast<std::uint8_t>(operation));
  queue_wire::append(request, address.id);
  queue_wire::append(request,
                     timeout ? static_cast<std::int64_t>(timeout->count()) : queue_wire::kForever);
  return request;
}

void send_request(const QueueAddress& address, queue_wire::Bytes& request) {
  if (!queue_wire::send_frame(broker_socket(address), request)) {
    broker_gone(address, std::strerror(errno));
  }
}

queue_wire::Status receive_reply(const QueueAddress& address, queue_wire::Bytes& payload) {
  auto reply = queue_wire::receive_frame(broker_socket(address));
  if (!reply || reply->empty()) broker_gone(address, "the connection closed");
  auto status = static_cast<queue_wire::Status>(reply->front());
  if (status == queue_wire::Status::unknown_queue) {
    throw Error("fiber: queue " + std::to_string(address.id) + " is not on the broker at " +
                address.host + ":" + std::to_string(address.port));
  }
  if (status == queue_wire::Status::stopping) broker_gone(address, "its runtime is ending");
  payload.assign(reply->begin() + 1, reply->end());
  return status;
}

}  // namespace fiber::detail
