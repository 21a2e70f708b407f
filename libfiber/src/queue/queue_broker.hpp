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
#include <functional>
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

  // A process given the reading end of Pipe direction `id` (a fiber::Process's argument) starts,
  // and ends. Once all that started have ended and none has read it, what the direction kept is
  // dropped and its senders are told the reader is gone (Status::reader_gone), as they are once
  // a reading process has ended, until another process reads it.
  void pipe_reader_starts(std::uint64_t id);
  void pipe_reader_ended(std::uint64_t id);

 private:
  struct Queue {
    std::deque<queue_wire::Bytes> items;
    std::size_t maxsize = 0;  // 0: unbounded
    std::size_t waiting_getters = 0;
    std::optional<queue_wire::Endpoint> reader;  // a Pipe's direction whose reading end attached
    std::size_t kept_bytes = 0;  // a Pipe's direction: the bytes of `items`, at most about
                                 // queue_wire::kPipeKeptBytes
    int reader_holders = 0;      // processes given its reading end, started and not ended
    bool reader_gone = false;    // all of them ended without reading it
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
  // A pipe_send: kept, or where the reading end is, or that it is gone (the lock is released).
  void pipe_send(int socket, Queue& queue, std::span<const char> payload,
                 std::unique_lock<std::mutex>& lock);
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
// Calls `act` with the runtime's broker if it runs (not once the runtime has ended, nor if no
// queue was made), holding the lock that ~Runtime takes to stop it.
void if_queue_broker_runs(const std::function<void(QueueBroker&)>& act);

}  // namespace fiber::detail
