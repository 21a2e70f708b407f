#include "queue/feeder.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "fiber/errors.hpp"
#include "posix/per_process.hpp"
#include "queue/broker_connection.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;

// Unsent bytes past which a put waits for the thread (a producer faster than the broker).
constexpr std::size_t kMostUnsentBytes = 16 << 20;
// The largest frame the thread makes of consecutive puts to one queue.
constexpr std::size_t kMostFrameBytes = 1 << 20;

posix::PerProcess<Feeder> feeders;

bool same_broker(const QueueAddress& a, const QueueAddress& b) {
  return a.host == b.host && a.port == b.port;
}

}  // namespace

Feeder::Feeder() : thread_([this] { run(); }) {}

Feeder& Feeder::of_this_process() {
  return feeders.get([] { return new Feeder(); });
}

void Feeder::settle_this_process() {
  if (Feeder* feeder = feeders.mine()) feeder->settle();
}

void Feeder::sync_this_process() {
  if (Feeder* feeder = feeders.mine()) feeder->sync();
}

void Feeder::sync_this_process(const QueueAddress& queue) {
  if (Feeder* feeder = feeders.mine()) feeder->sync(queue);
}

std::size_t Feeder::read_ahead_in_this_process(const QueueAddress& queue) {
  Feeder* feeder = feeders.mine();
  return feeder ? feeder->read_ahead_size(queue) : 0;
}

void Feeder::stop_this_process() {
  Feeder* feeder = feeders.mine();
  if (!feeder) return;
  try {
    feeder->settle();
  } catch (const Error&) {
    // the broker is gone: what was left to send cannot reach it
  }
  {
    std::lock_guard lock(feeder->mutex_);
    feeder->stopping_ = true;
  }
  feeder->work_.notify_one();
  feeder->thread_.join();
  feeders.forget();
  delete feeder;
}

void Feeder::put(const QueueAddress& queue, const std::vector<Bytes>& items) {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_bytes_ < kMostUnsentBytes || !error_.empty(); });
  throw_if_failed();
  queue_items(Operation::put, queue, items);
}

void Feeder::queue_items(Operation operation, const QueueAddress& queue,
                         const std::vector<Bytes>& items) {
  bool joins_last = !pending_.empty() && pending_.back().operation == operation &&
                    pending_.back().queue.id == queue.id &&
                    same_broker(pending_.back().queue, queue) &&
                    pending_.back().frame.size() < kMostFrameBytes;
  if (!joins_last) {
    pending_.push_back({queue, operation, request_head(operation, queue, std::nullopt)});
    pending_bytes_ += pending_.back().frame.size();
  }
  auto& frame = pending_.back().frame;
  for (const auto& item : items) {
    pending_bytes_ += sizeof(std::uint32_t) + item.size();
    queue_wire::append_item(frame, item);
  }
  last_queued_[key_of(queue)] = ++queued_;
  wake_if_idle();
}

void Feeder::wake_if_idle() {
  if (!idle_) return;
  idle_ = false;  // one wake-up, not one per put until the thread runs
  work_.notify_one();
}

void Feeder::sync() {
  std::unique_lock lock(mutex_);
  sync_until(queued_, lock);
}

void Feeder::sync(const QueueAddress& queue) {
  std::unique_lock lock(mutex_);
  auto found = last_queued_.find(key_of(queue));
  sync_until(found == last_queued_.end() ? 0 : found->second, lock);
}

void Feeder::sync_until(std::uint64_t target, std::unique_lock<std::mutex>& lock) {
  throw_if_failed();
  if (synced_ >= target) return;
  sync_wanted_ = std::max(sync_wanted_, target);
  work_.notify_one();
  done_.wait(lock, [&] { return synced_ >= target || !error_.empty(); });
  throw_if_failed();
}

void Feeder::settle() {
  {
    std::lock_guard lock(mutex_);
    return_read_ahead(read_ahead_.all());
  }
  sync();
}

std::vector<Bytes> Feeder::take_read_ahead(const QueueAddress& queue, std::size_t most) {
  std::lock_guard lock(mutex_);
  return read_ahead_.take(queue, most, ReadAhead::Clock::now());
}

void Feeder::keep_read_ahead(const QueueAddress& queue, std::vector<Bytes> items) {
  std::lock_guard lock(mutex_);
  read_ahead_.keep(queue, std::move(items), ReadAhead::Clock::now());
  wake_if_idle();  // to wait for the lease's end
}

std::size_t Feeder::read_ahead_size(const QueueAddress& queue) {
  std::lock_guard lock(mutex_);
  return read_ahead_.size(queue);
}

std::size_t Feeder::read_ahead_window(const QueueAddress& queue) {
  std::lock_guard lock(mutex_);
  return read_ahead_.window(queue);
}

void Feeder::return_read_ahead(std::vector<ReadAhead::Returned> returned) {
  for (auto& [queue, items] : returned) queue_items(Operation::unget, queue, items);
}

void Feeder::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (!pending_.empty()) {
      auto sending = std::exchange(pending_, {});
      std::uint64_t upto = queued_;
      pending_bytes_ = 0;
      done_.notify_all();  // room for waiting puts
      lock.unlock();
      std::string failed = send(sending);
      lock.lock();
      if (!failed.empty() && error_.empty()) error_ = failed;
      sent_ = upto;
      if (!failed.empty()) done_.notify_all();
      continue;
    }
    if (sync_wanted_ > synced_) {
      std::uint64_t upto = sent_;
      lock.unlock();
      std::string failed = sync_brokers();
      lock.lock();
      if (!failed.empty() && error_.empty()) error_ = failed;
      synced_ = upto;
      done_.notify_all();
      continue;
    }
    return_read_ahead(read_ahead_.expired(ReadAhead::Clock::now()));
    if (!pending_.empty()) continue;
    if (stopping_) return;
    idle_ = true;
    if (auto expiry = read_ahead_.next_expiry()) {
      work_.wait_until(lock, *expiry);
    } else {
      work_.wait(lock);
    }
    idle_ = false;
  }
}

std::string Feeder::send(std::vector<Outgoing>& frames) {
  try {
    // One write per broker: the frames to one broker, in order, one after the other.
    while (!frames.empty()) {
      QueueAddress broker = frames.front().queue;
      queue_wire::Bytes bytes;
      std::erase_if(frames, [&](Outgoing& outgoing) {
        if (!same_broker(outgoing.queue, broker)) return false;
        auto& frame = outgoing.frame;
        queue_wire::seal_frame(frame);
        bytes.insert(bytes.end(), frame.begin(), frame.end());
        return true;
      });
      if (!queue_wire::send_all(broker_socket(broker), bytes)) {
        broker_gone(broker, std::strerror(errno));
      }
      bool known = std::any_of(unsynced_brokers_.begin(), unsynced_brokers_.end(),
                               [&](const QueueAddress& at) { return same_broker(at, broker); });
      if (!known) unsynced_brokers_.push_back(broker);
    }
    return {};
  } catch (const Error& error) {
    return error.what();
  }
}

std::string Feeder::sync_brokers() {
  try {
    for (const auto& broker : std::exchange(unsynced_brokers_, {})) {
      auto request = request_head(Operation::sync, broker, std::nullopt);
      send_request(broker, request);
      queue_wire::Bytes payload;
      receive_reply(broker, payload);
    }
    return {};
  } catch (const Error& error) {
    return error.what();
  }
}

void Feeder::throw_if_failed() const {
  if (!error_.empty()) throw Error(error_);
}

}  // namespace fiber::detail
