// The queue broker's messages over TCP, in the byte order of the machines (one cluster, one
// architecture). A request: u32 size of what follows, u8 Operation, u64 queue id, i64 timeout in
// milliseconds (kForever: none), then the operation's payload. A reply: u32 size, u8 Status,
// payload. A batch payload is its items one after the other, each as u32 size + bytes. Written
// and read with the codec (codec.hpp): a payload cut short is a ProtocolError.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wire/codec.hpp"

namespace fiber::detail::queue_wire {

using Bytes = std::vector<char>;

enum class Operation : std::uint8_t {
  put,    // payload: a batch; reply only for a bounded queue (an unbounded one takes at once)
  get,    // payload: u32 most items to take; reply: a batch of at least one item
  poll,   // reply ok when the queue has an item
  size,   // reply: u64 items in the queue
  unget,  // payload: a batch of read-ahead items, back at the queue's front in order; no reply
  sync,   // reply ok: every request before it on the connection is done
  // A Pipe's direction (pipe_sender.hpp). payload: a batch; reply ok (kept for the reading end,
  // which has not attached yet; past kPipeKeptBytes the reply waits for room, that is for the
  // reading end), elsewhere + the reading end's endpoint (nothing kept), or reader_gone (every
  // process given the reading end ended without reading it: nothing kept).
  pipe_send,
  // payload: the reading end's endpoint; reply ok + a batch of what was kept, or claimed (another
  // process reads this end).
  pipe_attach,
};

enum class Status : std::uint8_t {
  ok,
  timed_out,
  unknown_queue,
  stopping,
  elsewhere,
  claimed,
  reader_gone,
};

// What the broker keeps of a Pipe's direction before its reading end first reads: a send past it
// waits, as a send into a full pipe does in Python, rather than grow the master without limit
// (one item is kept whatever its size).
constexpr std::size_t kPipeKeptBytes = std::size_t{16} << 20;

// Where a process listens for its Pipes' direct connections.
struct Endpoint {
  std::string host;     // its host's name: a sender there uses `local`
  std::string address;  // where others connect to `port` (queue/reachable_address.hpp)
  std::uint16_t port = 0;
  std::string local;  // its Unix-domain socket, for processes on `host`
  bool operator==(const Endpoint&) const = default;
};

constexpr std::int64_t kForever = -1;

// A request's head, after its size.
struct RequestHead {
  Operation operation;
  std::uint64_t queue;
  std::int64_t timeout_ms;
};

inline void append_request_head(Bytes& out, const RequestHead& head) {
  ByteWriter(out)
      .value(static_cast<std::uint8_t>(head.operation))
      .value(head.queue)
      .value(head.timeout_ms);
}

inline RequestHead take_request_head(ByteReader& request) {
  RequestHead head;
  head.operation = static_cast<Operation>(request.value<std::uint8_t>());
  head.queue = request.value<std::uint64_t>();
  head.timeout_ms = request.value<std::int64_t>();
  return head;
}

inline void append_item(Bytes& out, std::span<const char> item) { ByteWriter(out).sized(item); }

// The items of a batch payload.
inline std::vector<Bytes> split_batch(std::span<const char> in) {
  ByteReader reader(in, "a queue message's batch");
  std::vector<Bytes> items;
  while (!reader.at_end()) {
    auto item = reader.sized();
    items.emplace_back(item.begin(), item.end());
  }
  return items;
}

// An endpoint: u16 port, then the host, the address and the local name as batch items.
inline void append_endpoint(Bytes& out, const Endpoint& endpoint) {
  ByteWriter(out)
      .value(endpoint.port)
      .string(endpoint.host)
      .string(endpoint.address)
      .string(endpoint.local);
}

inline Endpoint take_endpoint(std::span<const char> in) {
  ByteReader reader(in, "a Pipe's endpoint");
  Endpoint endpoint;
  endpoint.port = reader.value<std::uint16_t>();
  endpoint.host = reader.string();
  endpoint.address = reader.string();
  endpoint.local = reader.string();
  reader.expect_end();
  return endpoint;
}

// A socket's send, without SIGPIPE (task processes keep its default action: it would kill them).
inline bool send_all(int fd, std::span<const char> bytes) {
  while (!bytes.empty()) {
    ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes = bytes.subspan(static_cast<std::size_t>(sent));
  }
  return true;
}

inline bool receive_all(int fd, std::span<char> bytes) {
  while (!bytes.empty()) {
    ssize_t got = ::recv(fd, bytes.data(), bytes.size(), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes = bytes.subspan(static_cast<std::size_t>(got));
  }
  return true;
}

// One framed message (what follows its size); empty at end of stream or on an error.
inline std::optional<Bytes> receive_frame(int fd) {
  std::uint32_t size = 0;
  if (!receive_all(fd, std::span(reinterpret_cast<char*>(&size), sizeof size))) return {};
  Bytes body(size);
  if (!receive_all(fd, body)) return {};
  return body;
}

// Fills in the u32 size that `body` starts with room for.
inline void seal_frame(Bytes& body) {
  ByteWriter(body).value_at(0, static_cast<std::uint32_t>(body.size() - sizeof(std::uint32_t)));
}

// Sends `body` (which starts with room for its u32 size, filled in here).
inline bool send_frame(int fd, Bytes& body) {
  seal_frame(body);
  return send_all(fd, body);
}

// A frame's start: room for its size.
inline Bytes frame() {
  Bytes start;
  ByteWriter(start).room_for<std::uint32_t>();
  return start;
}

// The next whole frame at the front of `unread` (a stream's bytes), taken off it; nothing while
// some of it has not arrived.
inline std::optional<std::span<const char>> take_frame(std::span<const char>& unread) {
  auto size = peek_value<std::uint32_t>(unread);
  if (!size || unread.size() - sizeof *size < *size) return std::nullopt;
  auto frame = unread.subspan(sizeof *size, *size);
  unread = unread.subspan(sizeof *size + *size);
  return frame;
}

// One whole frame holding `body`.
inline Bytes framed(std::span<const char> body) {
  Bytes whole;
  whole.reserve(sizeof(std::uint32_t) + body.size());
  whole.resize(sizeof(std::uint32_t));
  whole.insert(whole.end(), body.begin(), body.end());
  seal_frame(whole);
  return whole;
}

}  // namespace fiber::detail::queue_wire
