// The queue broker's messages over TCP, in the byte order of the machines (one cluster, one
// architecture). A request: u32 size of what follows, u8 Operation, u64 queue id, i64 timeout in
// milliseconds (kForever: none), then the operation's payload. A reply: u32 size, u8 Status,
// payload. A batch payload is its items one after the other, each as u32 size + bytes.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fiber::detail::queue_wire {

using Bytes = std::vector<char>;

enum class Operation : std::uint8_t {
  put,    // payload: a batch; reply only for a bounded queue (an unbounded one takes at once)
  get,    // payload: u32 most items to take; reply: a batch of at least one item
  poll,   // reply ok when the queue has an item
  size,   // reply: u64 items in the queue
  unget,  // payload: a batch of read-ahead items, back at the queue's front in order; no reply
  sync,   // reply ok: every request before it on the connection is done
  // A Pipe's direction (pipe_link.hpp). payload: a batch; reply ok (kept for the reading end,
  // which has not attached yet), or elsewhere + the reading end's endpoint (nothing kept).
  pipe_send,
  // payload: the reading end's endpoint; reply ok + a batch of what was kept, or claimed (another
  // process reads this end).
  pipe_attach,
};

enum class Status : std::uint8_t { ok, timed_out, unknown_queue, stopping, elsewhere, claimed };

// Where a process listens for its Pipes' direct connections.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string local;  // its Unix-domain socket, for processes on `host`
  bool operator==(const Endpoint&) const = default;
};

constexpr std::int64_t kForever = -1;
constexpr std::size_t kRequestHead = 1 + 8 + 8;

template <class T>
void append(Bytes& out, T value) {
  std::size_t at = out.size();
  out.resize(at + sizeof value);
  std::memcpy(out.data() + at, &value, sizeof value);
}

template <class T>
T take(std::span<const char>& in) {
  T value{};
  if (in.size() < sizeof value) return value;
  std::memcpy(&value, in.data(), sizeof value);
  in = in.subspan(sizeof value);
  return value;
}

inline void append_item(Bytes& out, std::span<const char> item) {
  append(out, static_cast<std::uint32_t>(item.size()));
  out.insert(out.end(), item.begin(), item.end());
}

// The items of a batch payload.
inline std::vector<Bytes> split_batch(std::span<const char> in) {
  std::vector<Bytes> items;
  while (in.size() >= sizeof(std::uint32_t)) {
    auto size = take<std::uint32_t>(in);
    if (size > in.size()) break;
    items.emplace_back(in.begin(), in.begin() + size);
    in = in.subspan(size);
  }
  return items;
}

// An endpoint: u16 port, then the host and the local name as batch items.
inline void append_endpoint(Bytes& out, const Endpoint& endpoint) {
  append(out, endpoint.port);
  append_item(out, endpoint.host);
  append_item(out, endpoint.local);
}

inline Endpoint take_endpoint(std::span<const char> in) {
  Endpoint endpoint;
  endpoint.port = take<std::uint16_t>(in);
  auto names = split_batch(in);
  if (names.size() == 2) {
    endpoint.host.assign(names[0].begin(), names[0].end());
    endpoint.local.assign(names[1].begin(), names[1].end());
  }
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
  auto size = static_cast<std::uint32_t>(body.size() - sizeof(std::uint32_t));
  std::memcpy(body.data(), &size, sizeof size);
}

// Sends `body` (which starts with room for its u32 size, filled in here).
inline bool send_frame(int fd, Bytes& body) {
  seal_frame(body);
  return send_all(fd, body);
}

// A frame's start: room for its size.
inline Bytes frame() { return Bytes(sizeof(std::uint32_t)); }

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
