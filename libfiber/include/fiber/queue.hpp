/// \file
/// fiber::Queue and fiber::SimpleQueue: Python's multiprocessing.Queue and SimpleQueue, of values
/// of one type that fiber serializes (as task arguments).
///
///   fiber::Queue<Transition> experience(1000);         // in the master; maxsize 0: unbounded
///   fiber::Process actor(run_actor, experience);       // a copy reaches the same queue
///   Transition t = experience.get(5s);                 // throws fiber::Empty after 5 s
///
/// The queues live in the master (a broker thread that the first queue starts and the runtime
/// stops) and are reached over TCP from the master, Processes and pool tasks alike; a copy of a
/// queue is its address, passed as an argument. Each consumer gets items in the order they were
/// put (per producer; across producers, the order the broker got them); with several consumers,
/// one may get later items while earlier ones are read ahead by another (as with Uber's Fiber).
///
/// As in Python, put() to an unbounded queue returns at once and a background thread of the
/// process sends the items (many per message); a process sees its own puts at its next get,
/// poll or qsize, and every put of a task or Process is in the queue before its result (or
/// exitcode) is. A producer that crashes loses what it had not yet sent, as in Python; flush()
/// waits until it is sent. A put to a bounded queue returns once the item is in. A get brings more
/// items than it asked for (read ahead for the next gets: 4, growing to 256 while all are taken);
/// what a process has read
/// ahead goes back to the queue when its task ends, or after 2 ms untaken (others waiting are
/// held up no longer); a consumer that crashes loses what it had read ahead, as a consumer of
/// Uber's Fiber loses its ZeroMQ buffer. A queue lives until the runtime ends. put_many and
/// get_many also move many items per call.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "fiber/detail/encode_item.hpp"
#include "fiber/detail/queue_channel.hpp"
#include "fiber/errors.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

/// A get with a timeout (or get_nowait) found no item: Python's queue.Empty.
class FIBER_EXPORT Empty : public Error {
 public:
  using Error::Error;
};

/// A put with a timeout (or put_nowait) found no room: Python's queue.Full.
class FIBER_EXPORT Full : public Error {
 public:
  using Error::Error;
};

/// Python's multiprocessing.Queue of values of type T (see the file's description).
template <class T>
class Queue {
 public:
  /// A new queue: only in the master (with a live fiber::Runtime). maxsize 0: unbounded;
  /// otherwise a put waits for room. (Elsewhere, Queue() is the empty copy that a task's argument
  /// is read into.)
  Queue() : channel_(detail::QueueChannel::create_or_unattached()) {}
  /// A new queue of at most `maxsize` items (0: unbounded), only in the master.
  explicit Queue(std::size_t maxsize) : channel_(detail::QueueChannel::create(maxsize)) {}

  /// Puts `item`, waiting for room in a bounded queue.
  void put(const T& item) { put_many(std::vector<T>{item}); }
  /// As put(item), but throws fiber::Full if no room came within `timeout`.
  template <class Rep, class Period>
  void put(const T& item, std::chrono::duration<Rep, Period> timeout) {
    put_all({detail::encode_item(item)}, detail::to_timeout(timeout));
  }
  /// put(item) that throws fiber::Full at once if there is no room.
  void put_nowait(const T& item) { put(item, detail::kNoWait); }
  /// All of `items`, in order, in one message (each waits for room in a bounded queue).
  void put_many(const std::vector<T>& items) {
    std::vector<Bytes> encoded;
    encoded.reserve(items.size());
    for (const auto& item : items) encoded.push_back(detail::encode_item(item));
    put_all(encoded, std::nullopt);
  }

  /// Takes the next item, waiting for one.
  T get() { return get_many(1).front(); }
  /// As get(), but throws fiber::Empty if no item came within `timeout`.
  template <class Rep, class Period>
  T get(std::chrono::duration<Rep, Period> timeout) {
    return take(1, detail::to_timeout(timeout)).front();
  }
  /// get() that throws fiber::Empty at once if no item is there.
  T get_nowait() { return get(detail::kNoWait); }
  /// At least one item (waiting for it), and up to `most` of those already there.
  std::vector<T> get_many(std::size_t most) { return take(most, std::nullopt); }
  /// As get_many(most), but throws fiber::Empty if no item came within `timeout`.
  template <class Rep, class Period>
  std::vector<T> get_many(std::size_t most, std::chrono::duration<Rep, Period> timeout) {
    return take(most, detail::to_timeout(timeout));
  }

  /// True if an item is there, waiting at most `timeout` for one (it is not taken).
  template <class Rep, class Period>
  bool poll(std::chrono::duration<Rep, Period> timeout) const {
    return channel_.poll(detail::to_timeout(timeout));
  }

  /// Waits until every item this process put (on any queue) is in its queue: after it, a crash
  /// loses none of them (Python: close() and join_thread()).
  void flush() const { channel_.flush(); }

  /// The number of items now (others may put or get at the same time, as in Python).
  std::size_t qsize() const { return channel_.size(); }
  /// qsize() == 0.
  bool empty() const { return qsize() == 0; }

  /// Boost.Serialization: a copy passed to a task or Process is the same queue.
  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& channel_;
  }

 private:
  void put_all(const std::vector<Bytes>& items, detail::QueueChannel::Timeout timeout) {
    if (!channel_.put(items, timeout)) throw Full("fiber: the queue is full");
  }
  std::vector<T> take(std::size_t most, detail::QueueChannel::Timeout timeout) {
    std::vector<T> items;
    for (const auto& bytes : channel_.get(most, timeout)) {
      items.push_back(decode<T>(bytes, "a queue's item"));
    }
    if (items.empty()) throw Empty("fiber: no item in the queue within the timeout");
    return items;
  }

  detail::QueueChannel channel_;
};

/// Python's SimpleQueue: unbounded, put and get without timeouts.
template <class T>
class SimpleQueue {
 public:
  /// A new unbounded queue (in the master), or the copy a task's argument is read into.
  SimpleQueue() = default;

  /// Puts `item`.
  void put(const T& item) { queue_.put(item); }
  /// Takes the next item, waiting for one.
  T get() { return queue_.get(); }
  /// True if no item is there now.
  bool empty() const { return queue_.empty(); }

  /// Boost.Serialization: a copy passed to a task or Process is the same queue.
  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& queue_;
  }

 private:
  Queue<T> queue_;
};

}  // namespace fiber
