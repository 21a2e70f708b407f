#include "queue/pipe_receiver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fiber/errors.hpp"
#include "posix/per_process.hpp"
#include "posix/tcp.hpp"
#include "queue/broker_connection.hpp"
#include "worker.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;
using queue_wire::Status;
using Clock = std::chrono::steady_clock;

// What one read takes from a socket at most.
constexpr std::size_t kReadBytes = 64 << 10;

posix::PerProcess<PipeReceiver> receivers;

timespec to_timespec(std::chrono::microseconds wait) {
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(wait);
  auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(wait - seconds);
  return {static_cast<time_t>(seconds.count()), static_cast<long>(nanoseconds.count())};
}

}  // namespace

PipeReceiver& PipeReceiver::of_this_process() {
  return receivers.get([] { return new PipeReceiver(); });
}

PipeReceiver::PipeReceiver() {
  endpoint_.host = this_process().host;
  endpoint_.local = "fiber-pipes-" + std::to_string(posix::this_pid());
  listeners_[0] = posix::listen_tcp(endpoint_.port, "a Pipe's reading end");
  listeners_[1] = posix::listen_local(endpoint_.local, "a Pipe's reading end");
  // accept_connections takes those waiting, then returns.
  for (auto& listener : listeners_) {
    ::fcntl(listener.get(), F_SETFL, ::fcntl(listener.get(), F_GETFL) | O_NONBLOCK);
  }
}

std::optional<Bytes> PipeReceiver::receive(const QueueAddress& direction,
                                           QueueChannel::Timeout timeout, bool take) {
  std::unique_lock lock(mutex_);
  if (!attached_.contains(direction.id)) attach(direction);
  auto start = Clock::now();
  auto deadline = timeout ? start + *timeout : Clock::time_point::max();
  while (true) {
    auto& inbox = inboxes_[direction.id];
    if (!inbox.empty()) {
      if (!take) return inbox.front();
      Bytes item = std::move(inbox.front());
      inbox.pop_front();
      return item;
    }
    auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    if (polling_) {  // another thread waits on the sockets, and tells what came
      arrived_.wait_until(lock, deadline);
      continue;
    }
    polling_ = true;
    std::chrono::microseconds wait{0};
    if (now - start >= kBusyPoll) {
      wait = deadline == Clock::time_point::max()
                 ? std::chrono::microseconds::max()
                 : std::chrono::ceil<std::chrono::microseconds>(deadline - now);
    }
    poll_sockets(wait, lock);
    polling_ = false;
    arrived_.notify_all();
  }
}

void PipeReceiver::attach(const QueueAddress& direction) {
  auto request = request_head(Operation::pipe_attach, direction, std::nullopt);
  queue_wire::append_endpoint(request, endpoint_);
  send_request(direction, request);
  queue_wire::Bytes payload;
  if (receive_reply(direction, payload) == Status::claimed) {
    throw Error("fiber: another process reads this end of the Pipe: an end is read in one process");
  }
  // What was kept comes before anything a sender sent here since (another thread may have
  // filed that already).
  auto& inbox = inboxes_[direction.id];
  auto kept = queue_wire::split_batch(payload);
  inbox.insert(inbox.begin(), std::make_move_iterator(kept.begin()),
               std::make_move_iterator(kept.end()));
  attached_.insert(direction.id);
}

void PipeReceiver::poll_sockets(std::chrono::microseconds wait,
                                std::unique_lock<std::mutex>& lock) {
  std::vector<pollfd> sockets;
  for (const auto& listener : listeners_) sockets.push_back({listener.get(), POLLIN, 0});
  for (const auto& incoming : incoming_) sockets.push_back({incoming.socket.get(), POLLIN, 0});
  lock.unlock();
  timespec forever_or_wait = to_timespec(wait);
  int ready =
      ::ppoll(sockets.data(), sockets.size(),
              wait == std::chrono::microseconds::max() ? nullptr : &forever_or_wait, nullptr);
  lock.lock();
  if (ready <= 0) return;
  // Only this thread (the one polling) changes incoming_: its order is still that of `sockets`.
  auto at = sockets.begin() + kListeners;
  for (auto incoming = incoming_.begin(); incoming != incoming_.end(); ++at) {
    if (at->revents != 0 && !read_from(*incoming)) {
      incoming = incoming_.erase(incoming);
    } else {
      ++incoming;
    }
  }
  for (std::size_t i = 0; i < kListeners; ++i) {
    if (sockets[i].revents != 0) accept_connections(listeners_[i].get());
  }
}

bool PipeReceiver::read_from(Incoming& incoming) {
  thread_local std::vector<char> chunk(kReadBytes);
  ssize_t got = ::recv(incoming.socket.get(), chunk.data(), chunk.size(), MSG_DONTWAIT);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return false;  // its end
  auto& buffer = incoming.buffer;
  buffer.insert(buffer.end(), chunk.begin(), chunk.begin() + std::max<ssize_t>(got, 0));
  std::span<const char> unread(buffer);
  while (unread.size() >= sizeof(std::uint32_t)) {
    std::uint32_t size = 0;
    std::memcpy(&size, unread.data(), sizeof size);
    if (unread.size() < sizeof size + size) break;
    auto frame = unread.subspan(sizeof size, size);
    if (!incoming.direction) {
      std::span<const char> hello = frame;
      incoming.direction = queue_wire::take<std::uint64_t>(hello);
    } else {
      inboxes_[*incoming.direction].emplace_back(frame.begin(), frame.end());
    }
    unread = unread.subspan(sizeof size + size);
  }
  buffer.erase(buffer.begin(), buffer.end() - static_cast<std::ptrdiff_t>(unread.size()));
  return true;
}

void PipeReceiver::accept_connections(int listener) {
  while (true) {
    int socket = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (socket < 0) return;  // none left (EAGAIN), or one that gave up before it was accepted
    if (listener == listeners_[0].get()) posix::no_delay(socket);
    incoming_.push_back({posix::UniqueFd(socket), std::nullopt, {}});
  }
}

}  // namespace fiber::detail
