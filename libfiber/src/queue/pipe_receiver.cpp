#include "queue/pipe_receiver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fiber/errors.hpp"
#include "posix/per_process.hpp"
#include "posix/tcp.hpp"
#include "posix/timespec.hpp"
#include "queue/broker_connection.hpp"
#include "queue/reachable_address.hpp"
#include "this_process.hpp"
#include "wire/codec.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;
using queue_wire::Status;
using Clock = std::chrono::steady_clock;

// What one read takes from a socket at most.
constexpr std::size_t kReadBytes = 64 << 10;

posix::PerProcess<PipeReceiver> receivers;

}  // namespace

PipeReceiver& PipeReceiver::of_this_process() {
  return receivers.get([] { return new PipeReceiver(); });
}

PipeReceiver::PipeReceiver() {
  endpoint_.host = this_process().host;
  endpoint_.address = reachable_address();
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
    // This thread polls for all until it leaves the loop's body, also by an exception.
    struct Polling {
      PipeReceiver& receiver;
      explicit Polling(PipeReceiver& r) : receiver(r) { receiver.polling_ = true; }
      ~Polling() {
        receiver.polling_ = false;
        receiver.arrived_.notify_all();
      }
    } polling(*this);
    if (!drain_rings()) {
      std::chrono::microseconds wait{0};
      if (now - start >= kBusyPoll) {
        wait = deadline == Clock::time_point::max()
                   ? std::chrono::microseconds::max()
                   : std::chrono::ceil<std::chrono::microseconds>(deadline - now);
      }
      // Before it sleeps, the reader says so in every ring and looks at them a last time: a
      // sender then rings the socket (pipe_sender.cpp).
      bool sleeps = wait.count() > 0;
      if (sleeps) set_ring_sleeps(1);
      if (!sleeps || !drain_rings()) poll_sockets(wait, lock);
      if (sleeps) set_ring_sleeps(0);
    }
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
  auto kept = read_reply(direction, payload, queue_wire::split_batch);
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
  // (microseconds::max(), for ever, is no time in nanoseconds: it is not converted.)
  const bool forever = wait == std::chrono::microseconds::max();
  timespec limit{};
  if (!forever) limit = posix::to_timespec(wait);
  int ready = ::ppoll(sockets.data(), sockets.size(), forever ? nullptr : &limit, nullptr);
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

bool PipeReceiver::drain_rings() {
  bool any = false;
  for (auto& incoming : incoming_) {
    if (!incoming.ring || incoming.ring->ring().empty()) continue;
    incoming.ring->ring().read_into(incoming.ring_bytes);
    any |= file_frames(incoming, incoming.ring_bytes);
  }
  return any;
}

void PipeReceiver::set_ring_sleeps(std::uint32_t sleeps) {
  for (auto& incoming : incoming_) {
    if (incoming.ring) incoming.ring->reader_sleeps().store(sleeps, std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool PipeReceiver::read_from(Incoming& incoming) {
  thread_local std::vector<char> chunk(kReadBytes);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  iovec data{chunk.data(), chunk.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got = ::recvmsg(incoming.socket.get(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {  // its end: the ring's last
    drain_rings();
    return false;
  }
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
    posix::UniqueFd memory(fd);  // the mapping outlives it
    if (!incoming.ring) incoming.ring = PipeRing::map(memory.get());
  }
  incoming.buffer.insert(incoming.buffer.end(), chunk.begin(),
                         chunk.begin() + std::max<ssize_t>(got, 0));
  file_frames(incoming, incoming.buffer);
  return true;
}

bool PipeReceiver::file_frames(Incoming& incoming, queue_wire::Bytes& buffer) {
  bool any = false;
  std::span<const char> unread(buffer);
  while (auto frame = queue_wire::take_frame(unread)) {
    if (!incoming.direction) {
      incoming.direction = ByteReader(*frame, "a Pipe's hello").value<std::uint64_t>();
    } else if (&buffer == &incoming.ring_bytes || !incoming.ring) {  // on the socket: bells
      inboxes_[*incoming.direction].emplace_back(frame->begin(), frame->end());
      any = true;
    }
  }
  buffer.erase(buffer.begin(), buffer.end() - static_cast<std::ptrdiff_t>(unread.size()));
  return any;
}

void PipeReceiver::accept_connections(int listener) {
  while (true) {
    int socket = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (socket < 0) return;  // none left (EAGAIN), or one that gave up before it was accepted
    if (listener == listeners_[0].get()) posix::no_delay(socket);
    incoming_.emplace_back().socket.reset(socket);
  }
}

}  // namespace fiber::detail
