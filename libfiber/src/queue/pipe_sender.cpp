#include "queue/pipe_sender.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "fiber/errors.hpp"
#include "posix/per_process.hpp"
#include "posix/tcp.hpp"
#include "queue/broker_connection.hpp"
#include "this_process.hpp"
#include "wire/codec.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;
using queue_wire::Status;

posix::PerProcess<PipeSender> senders;

[[noreturn]] void reader_gone(const std::string& why) {
  throw Error("fiber: the Pipe's reading end is gone: " + why);
}

[[noreturn]] void reading_process_gone(const std::string& why) {
  reader_gone("its process ended (" + why + ")");
}

// Sends `bytes` with the descriptor `fd` riding along (SCM_RIGHTS).
bool send_with_descriptor(int socket, std::span<const char> bytes, int fd) {
  iovec data{const_cast<char*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  return ::sendmsg(socket, &message, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

// A connection whose reader has not closed it (a reader only ever closes it). One it never
// accepted is reset when its process ends.
bool reader_alive(int socket) {
  char byte;
  ssize_t got = ::recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got > 0 || (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
}

// How long a sender waiting for room in a full ring sleeps before it checks the reader is alive.
constexpr std::chrono::milliseconds kFullRingCheck{100};

}  // namespace

PipeSender& PipeSender::of_this_process() {
  return senders.get([] { return new PipeSender(); });
}

PipeSender::Direct PipeSender::connect(const QueueAddress& direction,
                                       const queue_wire::Endpoint& reader) {
  Direct direct;
  std::string why;
  bool local = reader.host == this_process().host;
  if (local) direct.socket = posix::connect_local(reader.local, why);
  if (!direct.socket) {
    local = false;
    direct.socket = posix::connect_tcp(reader.address, reader.port, why);
  }
  if (!direct.socket) reading_process_gone(why);
  queue_wire::Bytes hello;
  ByteWriter(hello).value(direction.id);
  auto frame = queue_wire::framed(hello);
  posix::UniqueFd memory;
  if (local) direct.ring = PipeRing::create(memory);
  bool sent = direct.ring ? send_with_descriptor(direct.socket.get(), frame, memory.get())
                          : queue_wire::send_all(direct.socket.get(), frame);
  if (!sent) reading_process_gone(std::strerror(errno));
  return direct;
}

bool PipeSender::send_through(Direct& direct, std::span<const char> frame) {
  errno = 0;
  if (!direct.ring) return queue_wire::send_all(direct.socket.get(), frame);
  int socket = direct.socket.get();
  auto& ring = direct.ring->ring();
  // In pieces as the ring has room; after each, a reader asleep is woken to take it: the reader
  // says it sleeps before it looks at the ring a last time, so one of the two sees the other
  // (both fences), and a value never waits for a reader asleep.
  while (true) {
    frame = frame.subspan(ring.write_some(frame));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (direct.ring->reader_sleeps().load(std::memory_order_relaxed) != 0) {
      auto bell = queue_wire::framed({});
      if (!queue_wire::send_all(socket, bell)) return false;
    }
    if (frame.empty()) return true;
    while (!ring.wait_space(std::min(frame.size(), ring.capacity()), kFullRingCheck)) {
      if (!reader_alive(socket)) return false;
    }
  }
}

void PipeSender::send(const QueueAddress& direction, const Bytes& item) {
  std::lock_guard lock(mutex_);
  auto found = direct_.find(direction.id);
  if (found == direct_.end()) {
    auto request = request_head(Operation::pipe_send, direction, std::nullopt);
    queue_wire::append_item(request, item);
    send_request(direction, request);
    queue_wire::Bytes payload;
    auto status = receive_reply(direction, payload);  // waits while the broker keeps too much
    if (status == Status::ok) return;                 // kept for the reading end
    if (status == Status::reader_gone) {
      reader_gone("the Process given it ended without reading it");
    }
    found =
        direct_
            .emplace(direction.id,
                     connect(direction, read_reply(direction, payload, queue_wire::take_endpoint)))
            .first;
  }
  if (!send_through(found->second, queue_wire::framed(item))) {
    std::string why = errno != 0 ? std::strerror(errno) : "it closed the connection";
    direct_.erase(found);
    reading_process_gone(why);
  }
}

}  // namespace fiber::detail
