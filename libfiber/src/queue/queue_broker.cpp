#include "queue/queue_broker.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "log.hpp"
#include "posix/tcp.hpp"
#include "queue/reachable_address.hpp"
#include "runtime_state.hpp"
#include "wire/codec.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Bytes;
using queue_wire::Operation;
using queue_wire::Status;

// A get's reply holds items up to this size (and at least one item).
constexpr std::size_t kMostReplyBytes = 1 << 20;

void reply(int socket, Status status, Bytes body = queue_wire::frame()) {
  body.insert(body.begin() + sizeof(std::uint32_t), static_cast<char>(status));
  queue_wire::send_frame(socket, body);
}

}  // namespace

QueueBroker::QueueBroker(std::string host) : host_(std::move(host)) {
  listener_ = posix::listen_tcp(port_, "the queue broker");
  acceptor_ = std::thread([this] { accept_connections(); });
  log::debug("queue broker listening on {}:{}", host_, port_);
}

QueueBroker::~QueueBroker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, queue] : queues_) queue->changed.notify_all();
    for (auto& connection : connections_) ::shutdown(connection.socket.get(), SHUT_RDWR);
  }
  ::shutdown(listener_.get(), SHUT_RDWR);
  acceptor_.join();
  for (auto& connection : connections_) connection.thread.join();
}

QueueAddress QueueBroker::create(std::size_t maxsize) {
  std::lock_guard lock(mutex_);
  std::uint64_t id = next_id_++;
  auto& queue = queues_[id];
  queue = std::make_unique<Queue>();
  queue->maxsize = maxsize;
  return QueueAddress{host_, port_, id, maxsize > 0};
}

void QueueBroker::accept_connections() {
  while (true) {
    int socket = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard lock(mutex_);
    if (stopping_) {
      if (socket >= 0) ::close(socket);
      return;
    }
    if (socket < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      log::error("fiber: the queue broker stops accepting connections: {}", std::strerror(errno));
      return;
    }
    posix::no_delay(socket);
    connections_.remove_if([](Connection& done) {
      if (!done.finished) return false;
      done.thread.join();
      return true;
    });
    auto& connection = connections_.emplace_back();
    connection.socket.reset(socket);
    connection.thread = std::thread([this, &connection] { serve(connection); });
  }
}

void QueueBroker::serve(Connection& connection) {
  int socket = connection.socket.get();
  try {
    while (auto request = queue_wire::receive_frame(socket)) {
      if (!answer(socket, *request)) break;
    }
  } catch (const ProtocolError& error) {
    log::warn("fiber: the queue broker drops a connection whose request it cannot read: {}",
              error.what());
  }
  // A client that ended (or crashed) mid-request: the request is dropped, the queue lives on.
  std::lock_guard lock(mutex_);
  connection.finished = true;
}

bool QueueBroker::answer(int socket, std::span<const char> request) {
  ByteReader reader(request, "a queue request");
  const auto [operation, id, timeout_ms] = queue_wire::take_request_head(reader);
  const std::span<const char> payload = reader.rest();
  if (operation == Operation::sync) {
    reply(socket, Status::ok);
    return true;
  }
  std::unique_lock lock(mutex_);
  auto found = queues_.find(id);
  if (found == queues_.end()) {
    lock.unlock();
    reply(socket, Status::unknown_queue);
    return true;
  }
  Queue& queue = *found->second;
  switch (operation) {
    case Operation::put: {
      Status status = put(queue, queue_wire::split_batch(payload), lock, timeout_ms);
      bool answered = queue.maxsize > 0;
      lock.unlock();
      if (answered) reply(socket, status);
      return true;
    }
    case Operation::unget: {
      auto items = queue_wire::split_batch(payload);
      for (auto item = items.rbegin(); item != items.rend(); ++item) {
        queue.items.push_front(std::move(*item));
      }
      queue.changed.notify_all();
      return true;
    }
    case Operation::sync:
      break;
    case Operation::pipe_send:
      pipe_send(socket, queue, payload, lock);
      return true;
    case Operation::pipe_attach: {
      auto endpoint = queue_wire::take_endpoint(payload);
      if (queue.reader && *queue.reader != endpoint) {
        lock.unlock();
        reply(socket, Status::claimed);
        return true;
      }
      queue.reader = endpoint;
      queue.reader_gone = false;
      Bytes kept = queue_wire::frame();
      for (const auto& item : queue.items) queue_wire::append_item(kept, item);
      queue.items.clear();
      queue.kept_bytes = 0;
      queue.changed.notify_all();  // sends waiting for room go to the reader now
      lock.unlock();
      reply(socket, Status::ok, std::move(kept));
      return true;
    }
    case Operation::get: {
      Bytes items = queue_wire::frame();
      auto most = ByteReader(payload, "a get request").value<std::uint32_t>();
      Status status = get(queue, most, items, lock, timeout_ms);
      lock.unlock();
      reply(socket, status, std::move(items));
      return true;
    }
    case Operation::poll: {
      bool ready = wait(queue, lock, timeout_ms, [&] { return !queue.items.empty(); });
      lock.unlock();
      reply(socket, ready ? Status::ok : Status::timed_out);
      return true;
    }
    case Operation::size: {
      Bytes size = queue_wire::frame();
      ByteWriter(size).value(static_cast<std::uint64_t>(queue.items.size()));
      lock.unlock();
      reply(socket, Status::ok, std::move(size));
      return true;
    }
  }
  return false;
}

void QueueBroker::pipe_send(int socket, Queue& queue, std::span<const char> payload,
                            std::unique_lock<std::mutex>& lock) {
  auto items = queue_wire::split_batch(payload);
  std::size_t bytes = 0;
  for (const auto& item : items) bytes += item.size();
  // Room is made only by the reading end (its attach takes all) or its end (all dropped).
  wait(queue, lock, queue_wire::kForever, [&] {
    return queue.reader || queue.reader_gone || queue.items.empty() ||
           queue.kept_bytes + bytes <= queue_wire::kPipeKeptBytes;
  });
  if (stopping_) {
    lock.unlock();
    reply(socket, Status::stopping);
    return;
  }
  if (queue.reader) {
    Bytes endpoint = queue_wire::frame();
    queue_wire::append_endpoint(endpoint, *queue.reader);
    lock.unlock();
    reply(socket, Status::elsewhere, std::move(endpoint));
    return;
  }
  if (queue.reader_gone) {
    lock.unlock();
    reply(socket, Status::reader_gone);
    return;
  }
  for (auto& item : items) queue.items.push_back(std::move(item));
  queue.kept_bytes += bytes;
  lock.unlock();
  reply(socket, Status::ok);
}

void QueueBroker::pipe_reader_starts(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto found = queues_.find(id);
  if (found != queues_.end()) ++found->second->reader_holders;
}

void QueueBroker::pipe_reader_ended(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto found = queues_.find(id);
  if (found == queues_.end()) return;
  Queue& queue = *found->second;
  if (--queue.reader_holders > 0 || queue.reader) return;
  queue.reader_holders = 0;
  queue.reader_gone = true;
  queue.items.clear();
  queue.kept_bytes = 0;
  queue.changed.notify_all();  // sends waiting for room are told
}

template <class Ready>
bool QueueBroker::wait(Queue& queue, std::unique_lock<std::mutex>& lock, std::int64_t timeout_ms,
                       Ready ready) {
  auto done = [&] { return stopping_ || ready(); };
  if (timeout_ms == queue_wire::kForever) {
    queue.changed.wait(lock, done);
  } else {
    queue.changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), done);
  }
  return !stopping_ && ready();
}

Status QueueBroker::put(Queue& queue, std::vector<Bytes> items, std::unique_lock<std::mutex>& lock,
                        std::int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (auto& item : items) {
    if (queue.maxsize > 0) {
      std::int64_t left = timeout_ms;
      if (timeout_ms != queue_wire::kForever) {
        left = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                             deadline - std::chrono::steady_clock::now())
                                             .count());
      }
      queue.changed.notify_all();  // the items put so far, for the getters that make room
      if (!wait(queue, lock, left, [&] { return queue.items.size() < queue.maxsize; })) {
        return stopping_ ? Status::stopping : Status::timed_out;
      }
    }
    queue.items.push_back(std::move(item));
  }
  queue.changed.notify_all();
  return Status::ok;
}

Status QueueBroker::get(Queue& queue, std::uint32_t most, Bytes& reply,
                        std::unique_lock<std::mutex>& lock, std::int64_t timeout_ms) {
  ++queue.waiting_getters;
  bool ready = wait(queue, lock, timeout_ms, [&] { return !queue.items.empty(); });
  --queue.waiting_getters;
  if (!ready) return stopping_ ? Status::stopping : Status::timed_out;
  // A getter asking for many (a read-ahead) leaves a share to those waiting beside it.
  std::size_t share = std::max<std::size_t>(1, std::min<std::size_t>(most, queue.items.size()));
  if (queue.waiting_getters > 0) {
    share =
        std::max<std::size_t>(1, std::min(share, queue.items.size() / (queue.waiting_getters + 1)));
  }
  for (std::size_t taken = 0; taken < share && !queue.items.empty(); ++taken) {
    if (taken > 0 && reply.size() + queue.items.front().size() > kMostReplyBytes) break;
    queue_wire::append_item(reply, queue.items.front());
    queue.items.pop_front();
  }
  queue.changed.notify_all();
  return Status::ok;
}

QueueBroker& queue_broker() {
  RuntimeState& state = runtime_state();
  std::lock_guard lock(state.queue_broker_mutex);
  if (!state.queue_broker) state.queue_broker = std::make_unique<QueueBroker>(reachable_address());
  return *state.queue_broker;
}

void if_queue_broker_runs(const std::function<void(QueueBroker&)>& act) {
  if (!runtime_live()) return;
  RuntimeState& state = runtime_state();
  std::lock_guard lock(state.queue_broker_mutex);
  if (state.queue_broker) act(*state.queue_broker);
}

}  // namespace fiber::detail
