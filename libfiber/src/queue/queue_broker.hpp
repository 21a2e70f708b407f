// The master's queue broker: the queues of fiber::Queue, SimpleQueue and Pipe, served over TCP
// to every process of the job (task processes are not MPI processes; sockets reach them all), as
// Uber's Fiber keeps its queues on the master. A thread accepts connections and one thread per
// connection serves its requests (wire/queue_messages.hpp), so that a blocked get or put waits only
// its own client. Started by the first queue of the runtime, stopped when the runtime ends.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "fiber/detail/queue_channel.hpp"
#include "posix/unique_fd.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {

class QueueBroker {
 public:
  // Listens on every interface, on a port the system picks; `host` is the address clients use
  // (reachable_address.hpp).
  explicit QueueBroker(std::string host);
  ~QueueBroker();  // wakes every waiting request (it fails), closes every connection
  QueueBroker(const QueueBroker&) = delete;
  QueueBroker& operator=(const QueueBroker&) = delete;

  QueueAddress create(std::size_t maxsize);

 private:
  struct Queue {
    std::deque<queue_wire::Bytes> items;
    std::size_t maxsize = 0;  // 0: unbounded
    std::size_t waiting_getters = 0;
    std::optional<queue_wire::Endpoint> reader;  // a Pipe's direction whose reading end attached
    std::condition_variable changed;
  };
  struct Connection {
    posix::UniqueFd socket;
    std::thread thread;
    bool finished = false;
  };

  void accept_connections();
  void serve(Connection& connection);
  // Answers one request; false if the connection must end. Throws ProtocolError if the request
  // is cut short.
  bool answer(int socket, std::span<const char> request);
  queue_wire::Status put(Queue& queue, std::vector<queue_wire::Bytes> items,
                         std::unique_lock<std::mutex>& lock, std::int64_t timeout_ms);
  queue_wire::Status get(Queue& queue, std::uint32_t most, queue_wire::Bytes& reply,
                         std::unique_lock<std::mutex>& lock, std::int64_t timeout_ms);
  // Waits on `queue` until `ready` or the timeout; false on timeout or stop.
  template <class Ready>
  bool wait(Queue& queue, std::unique_lock<std::mutex>& lock, std::int64_t timeout_ms, Ready ready);

  std::string host_;
  std::uint16_t port_ = 0;
  posix::UniqueFd listener_;
  std::mutex mutex_;
  bool stopping_ = false;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Queue>> queues_;
  std::list<Connection> connections_;
  std::thread acceptor_;
};

// The runtime's broker, started on first use. Throws fiber::Error without a live Runtime.
QueueBroker& queue_broker();

}  // namespace fiber::detail
