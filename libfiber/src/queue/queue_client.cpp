// QueueChannel's requests to the broker, over one connection per thread of each process to each
// broker: a thread blocked in a get does not hold up the others. A forked process (a task
// process) makes its own connections instead of sharing its parent's.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "fiber/detail/queue_channel.hpp"
#include "fiber/errors.hpp"
#include "posix/unique_fd.hpp"
#include "queue/queue_broker.hpp"
#include "queue/wire.hpp"
#include "runtime_state.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;
using queue_wire::Status;

constexpr const char* kMadeInTheMaster =
    "fiber: a queue is made in the master, with a live fiber::Runtime, and reaches tasks and "
    "Processes as an argument";

struct BrokerConnection {
  pid_t pid = 0;
  posix::UniqueFd socket;
};

[[noreturn]] void broker_gone(const QueueAddress& address, const std::string& why) {
  throw Error("fiber: cannot reach the queue broker at " + address.host + ":" +
              std::to_string(address.port) + " (" + why + "); has the master's runtime ended?");
}

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

int connection_to(const QueueAddress& address) {
  if (address.port == 0) throw Error(kMadeInTheMaster);
  thread_local std::map<std::pair<std::string, std::uint16_t>, BrokerConnection> connections;
  auto& connection = connections[{address.host, address.port}];
  if (connection.pid != ::getpid()) {
    connection.socket.release();  // the parent's: it stays open for the parent
    connection.socket = connect_to(address);
    connection.pid = ::getpid();
  }
  return connection.socket.get();
}

queue_wire::Bytes request_head(Operation operation, const QueueAddress& address,
                               QueueChannel::Timeout timeout) {
  auto request = queue_wire::frame();
  queue_wire::append(request, static_cast<std::uint8_t>(operation));
  queue_wire::append(request, address.id);
  queue_wire::append(request,
                     timeout ? static_cast<std::int64_t>(timeout->count()) : queue_wire::kForever);
  return request;
}

void send(const QueueAddress& address, queue_wire::Bytes& request) {
  if (!queue_wire::send_frame(connection_to(address), request)) {
    broker_gone(address, std::strerror(errno));
  }
}

// The reply's status, its payload left in `payload`.
Status receive(const QueueAddress& address, queue_wire::Bytes& payload) {
  auto reply = queue_wire::receive_frame(connection_to(address));
  if (!reply || reply->empty()) broker_gone(address, "the connection closed");
  auto status = static_cast<Status>(reply->front());
  if (status == Status::unknown_queue) {
    throw Error("fiber: queue " + std::to_string(address.id) + " is not on the broker at " +
                address.host + ":" + std::to_string(address.port));
  }
  if (status == Status::stopping) broker_gone(address, "its runtime is ending");
  payload.assign(reply->begin() + 1, reply->end());
  return status;
}

}  // namespace

QueueChannel QueueChannel::create(std::size_t maxsize) {
  if (!runtime_live()) throw Error(kMadeInTheMaster);
  return QueueChannel(queue_broker().create(maxsize));
}

QueueChannel QueueChannel::create_or_unattached() {
  return runtime_live() ? create(0) : QueueChannel();
}

bool QueueChannel::put(const std::vector<Bytes>& items, Timeout timeout) const {
  auto request = request_head(Operation::put, address_, timeout);
  for (const auto& item : items) queue_wire::append_item(request, item);
  send(address_, request);
  if (!address_.bounded) return true;
  queue_wire::Bytes payload;
  return receive(address_, payload) == Status::ok;
}

std::vector<Bytes> QueueChannel::get(std::size_t most, Timeout timeout) const {
  auto request = request_head(Operation::get, address_, timeout);
  constexpr std::size_t kMostPerMessage = std::numeric_limits<std::uint32_t>::max();
  queue_wire::append(request, static_cast<std::uint32_t>(std::min(most, kMostPerMessage)));
  send(address_, request);
  queue_wire::Bytes payload;
  if (receive(address_, payload) != Status::ok) return {};
  return queue_wire::split_batch(payload);
}

bool QueueChannel::poll(Timeout timeout) const {
  auto request = request_head(Operation::poll, address_, timeout);
  send(address_, request);
  queue_wire::Bytes payload;
  return receive(address_, payload) == Status::ok;
}

std::size_t QueueChannel::size() const {
  auto request = request_head(Operation::size, address_, std::nullopt);
  send(address_, request);
  queue_wire::Bytes payload;
  receive(address_, payload);
  std::span<const char> in(payload);
  return queue_wire::take<std::uint64_t>(in);
}

}  // namespace fiber::detail
