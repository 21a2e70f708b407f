#include "queue/pipe_sender.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include "fiber/errors.hpp"
#include "posix/per_process.hpp"
#include "posix/tcp.hpp"
#include "queue/broker_connection.hpp"
#include "queue/wire.hpp"
#include "worker.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;
using queue_wire::Status;

posix::PerProcess<PipeSender> senders;

[[noreturn]] void reader_gone(const std::string& why) {
  throw Error("fiber: the Pipe's reading end is gone (" + why + "): its process ended");
}

// Sends one frame: u32 size, then `bytes`.
bool send_frame_of(int socket, std::span<const char> bytes) {
  auto frame = queue_wire::frame();
  frame.insert(frame.end(), bytes.begin(), bytes.end());
  return queue_wire::send_frame(socket, frame);
}

}  // namespace

PipeSender& PipeSender::of_this_process() {
  return senders.get([] { return new PipeSender(); });
}

void PipeSender::send(const QueueAddress& direction, const Bytes& item) {
  std::lock_guard lock(mutex_);
  auto found = direct_.find(direction.id);
  if (found == direct_.end()) {
    auto request = request_head(Operation::pipe_send, direction, std::nullopt);
    queue_wire::append_item(request, item);
    send_request(direction, request);
    queue_wire::Bytes payload;
    if (receive_reply(direction, payload) == Status::ok) return;  // kept for the reading end
    auto reader = queue_wire::take_endpoint(payload);
    std::string why;
    posix::UniqueFd socket;
    if (reader.host == this_process().host) socket = posix::connect_local(reader.local, why);
    if (!socket) socket = posix::connect_tcp(reader.host, reader.port, why);
    if (!socket) reader_gone(why);
    queue_wire::Bytes hello;
    queue_wire::append(hello, direction.id);
    if (!send_frame_of(socket.get(), hello)) reader_gone(std::strerror(errno));
    found = direct_.emplace(direction.id, std::move(socket)).first;
  }
  if (!send_frame_of(found->second.get(), item)) {
    std::string why = std::strerror(errno);
    direct_.erase(found);
    reader_gone(why);
  }
}

}  // namespace fiber::detail
