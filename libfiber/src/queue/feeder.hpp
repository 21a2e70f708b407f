// This process's queue traffic that no caller waits for, sent by one background thread:
//  - the items of puts to unbounded queues, as Python's multiprocessing.Queue sends them (its
//    feeder thread): put() returns at once, and a stream of puts leaves in a few large messages;
//  - read-ahead items (read_ahead.hpp) going back to their queue.
// A get, poll or qsize of this process first waits until what the feeder sent has reached the
// broker (a sync round trip, only if it sent something since the last one), so that a process
// sees its own puts. At the end of each task (ItemRunner) and of the master's runtime the feeder
// settles: read-ahead returned, everything sent, synced; a task's puts are in their queue before
// its result is reported. A process that crashes loses what it had not yet sent, as in Python.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fiber/bytes.hpp"
#include "fiber/detail/queue_channel.hpp"
#include "queue/read_ahead.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {

class Feeder {
 public:
  // This process's feeder, started on first use (again in a forked child: posix/per_process.hpp).
  static Feeder& of_this_process();
  // Settles this process's feeder, if it has one. Throws fiber::Error if what it had to send
  // could not reach the broker.
  static void settle_this_process();
  // Settles and stops this process's feeder (the master, before its broker stops).
  static void stop_this_process();
  // sync() and read_ahead_size() of this process's feeder, if it has one: a process that never
  // put to an unbounded queue nor got from one has nothing to wait for or count, and starts no
  // thread for it.
  static void sync_this_process();
  static void sync_this_process(const QueueAddress& queue);
  static std::size_t read_ahead_in_this_process(const QueueAddress& queue);

  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;

  // `items` go to `queue` (unbounded) in order, after this process's earlier puts. Waits only
  // while more than kMostUnsentBytes wait to be sent.
  void put(const QueueAddress& queue, const std::vector<Bytes>& items);
  // Waits until everything put or returned before has reached its broker.
  void sync();
  // Waits until what was put on (or returned to) `queue` before has reached its broker.
  void sync(const QueueAddress& queue);
  // Returns the read-ahead items to their queues, then syncs.
  void settle();

  std::vector<Bytes> take_read_ahead(const QueueAddress& queue, std::size_t most);
  void keep_read_ahead(const QueueAddress& queue, std::vector<Bytes> items);
  std::size_t read_ahead_size(const QueueAddress& queue);
  std::size_t read_ahead_window(const QueueAddress& queue);

 private:
  struct Outgoing {
    QueueAddress queue;
    queue_wire::Operation operation;
    queue_wire::Bytes frame;
  };

  Feeder();
  void run();
  void queue_items(queue_wire::Operation operation, const QueueAddress& queue,
                   const std::vector<Bytes>& items);
  void wake_if_idle();
  void return_read_ahead(std::vector<ReadAhead::Returned> returned);
  // Sends the frames, a write per broker; the error, or empty.
  std::string send(std::vector<Outgoing>& frames);
  // A sync round trip to every broker sent to since the last; the error, or empty.
  std::string sync_brokers();
  void throw_if_failed() const;
  void sync_until(std::uint64_t target, std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable work_;  // to the thread: something to send or sync
  std::condition_variable done_;  // to callers: sent, synced, or room
  std::vector<Outgoing> pending_;
  std::size_t pending_bytes_ = 0;
  std::uint64_t queued_ = 0;  // frames queued so far (and their items), counted
  std::uint64_t sent_ = 0;
  std::uint64_t synced_ = 0;
  std::uint64_t sync_wanted_ = 0;
  std::map<QueueKey, std::uint64_t> last_queued_;  // the count of each queue's last frame
  std::vector<QueueAddress> unsynced_brokers_;     // a queue of each
  std::string error_;
  bool idle_ = false;
  bool stopping_ = false;
  ReadAhead read_ahead_;
  std::thread thread_;
};

}  // namespace fiber::detail
