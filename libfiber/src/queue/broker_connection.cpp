#include "queue/broker_connection.hpp"

#include <unistd.h>

#include <map>
#include <utility>

#include "fiber/errors.hpp"
#include "posix/tcp.hpp"
#include "posix/this_pid.hpp"
#include "posix/unique_fd.hpp"

namespace fiber::detail {
namespace {

struct BrokerConnection {
  pid_t pid = 0;
  posix::UniqueFd socket;
};

posix::UniqueFd connect_to(const QueueAddress& address) {
  std::string why;
  auto socket = posix::connect_tcp(address.host, address.port, why);
  if (!socket) broker_gone(address, why);
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
  queue_wire::append_request_head(
      request, {operation, address.id,
                timeout ? static_cast<std::int64_t>(timeout->count()) : queue_wire::kForever});
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
