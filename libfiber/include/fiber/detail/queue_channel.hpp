// The untyped side of fiber::Queue, SimpleQueue and Pipe: a queue of byte strings held by the
// master's queue broker (libfiber/src/queue/queue_broker.hpp), reached over TCP from any process
// of the job, by its address. The address is all a copy holds: it is what a task's argument
// carries, and each process connects on first use (one connection per thread, and one for its
// feeder thread: libfiber/src/queue/feeder.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fiber/export.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

struct QueueAddress {
  std::string host;  // the broker's address (an IPv4 address other nodes reach it by)
  std::uint16_t port = 0;
  std::uint64_t id = 0;
  bool bounded = false;  // a put waits for the broker's answer (room) only then

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& host& port& id& bounded;
  }
};

class FIBER_EXPORT QueueChannel {
 public:
  using Timeout = std::optional<std::chrono::milliseconds>;  // empty: wait as long as it takes

  QueueChannel() = default;
  // A new queue on this process's broker (started on first use); `maxsize` 0: unbounded.
  // Only in the master, with a live fiber::Runtime.
  static QueueChannel create(std::size_t maxsize);
  // create(0) in the master; elsewhere (a task process reading one from its arguments) a channel
  // to be read from an archive.
  static QueueChannel create_or_unattached();

  // False if there was no room for all of them within `timeout` (those that fit are in).
  bool put(const std::vector<Bytes>& items, Timeout timeout) const;
  // Up to `most` items, at least one; empty if none came within `timeout`.
  std::vector<Bytes> get(std::size_t most, Timeout timeout) const;
  // True if an item is there within `timeout`, without taking it.
  bool poll(Timeout timeout) const;
  std::size_t size() const;
  // Waits until what this process put is in its queues.
  void flush() const;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& address_;
  }

 private:
  explicit QueueChannel(QueueAddress address) : address_(std::move(address)) {}
  QueueAddress address_;
};

// A typed queue's or pipe's timeout as a channel's: rounded up to whole milliseconds.
inline QueueChannel::Timeout to_timeout(auto timeout) {
  return std::chrono::ceil<std::chrono::milliseconds>(timeout);
}

// The timeout of put_nowait and get_nowait.
constexpr std::chrono::milliseconds kNoWait{0};

}  // namespace fiber::detail
