// The items a process took from a queue's broker beyond what its get asked for, so that the next
// gets need no round trip (one request brings up to kReadAheadItems). An item untaken for the
// lease goes back to the queue (the feeder thread returns it): a process that reads ahead and
// then stops getting does not keep the items from the others for longer than that. Items still
// here when a task ends go back too (Feeder::settle); a process that crashes loses those it held,
// as Uber's Fiber's read-ahead (ZeroMQ's receive buffer) does. Not thread-safe: the Feeder locks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fiber/detail/queue_channel.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

// Items one get request may bring beyond what it asked for: the window starts at the first
// number, doubles each time a process took all it had read ahead, and falls to a quarter when
// items go back untaken (a slow consumer of large items does not move them to and fro).
constexpr std::size_t kFirstReadAhead = 4;
constexpr std::size_t kReadAheadItems = 256;
constexpr std::size_t kReadAheadGrowth = 2;
constexpr std::size_t kReadAheadShrink = 4;
// How long read-ahead items wait, untaken, before they go back to the queue.
constexpr std::chrono::milliseconds kReadAheadLease{2};

// A queue, as a key: the same queue whatever copy of its address.
using QueueKey = std::tuple<std::string, std::uint16_t, std::uint64_t>;
inline QueueKey key_of(const QueueAddress& queue) { return {queue.host, queue.port, queue.id}; }

class ReadAhead {
 public:
  using Clock = std::chrono::steady_clock;
  struct Returned {
    QueueAddress queue;
    std::vector<Bytes> items;  // in the queue's order
  };

  explicit ReadAhead(Clock::duration lease = kReadAheadLease) : lease_(lease) {}

  // Up to `most` of `queue`'s items, oldest first (none if it has none here).
  std::vector<Bytes> take(const QueueAddress& queue, std::size_t most, Clock::time_point now);
  // `items` join `queue`'s, after those already here.
  void keep(const QueueAddress& queue, std::vector<Bytes> items, Clock::time_point now);
  std::size_t size(const QueueAddress& queue) const;
  bool empty() const;
  // How many items beyond its need a get of `queue` asks for now.
  std::size_t window(const QueueAddress& queue) const;

  // The items of every queue that nothing took from for the lease, removed from here.
  std::vector<Returned> expired(Clock::time_point now);
  // All items, removed from here.
  std::vector<Returned> all();
  // When the next queue's items expire, if any are here.
  std::optional<Clock::time_point> next_expiry() const;

 private:
  using Key = QueueKey;
  struct Held {
    QueueAddress queue;
    std::deque<Bytes> items;
    Clock::time_point last_taken;
  };
  template <class Expired>
  std::vector<Returned> remove_if(Expired expired);

  Clock::duration lease_;
  std::map<Key, Held> held_;            // only queues with items
  std::map<Key, std::size_t> windows_;  // queues whose window is not kFirstReadAhead
};

}  // namespace fiber::detail
