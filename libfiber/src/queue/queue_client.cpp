// QueueChannel: a queue's requests to its broker (queue_broker.hpp). Puts to an unbounded queue go
// through this process's feeder thread (feeder.hpp), which sends them in batches; the other
// requests go on the calling thread's own connection (broker_connection.hpp), after the feeder
// has synced what this process put on the same queue, and a get brings up to its read-ahead
// window more than it asked for (read_ahead.hpp).
#include <algorithm>
#include <iterator>
#include <limits>

#include "fiber/detail/queue_channel.hpp"
#include "queue/broker_connection.hpp"
#include "queue/feeder.hpp"
#include "queue/queue_broker.hpp"
#include "runtime_state.hpp"
#include "wire/codec.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {
namespace {

using queue_wire::Operation;
using queue_wire::Status;

// A request on this thread's connection, after everything this process put before it.
queue_wire::Bytes request_in_order(Operation operation, const QueueAddress& address,
                                   QueueChannel::Timeout timeout) {
  if (address.port == 0) made_in_the_master();
  Feeder::sync_this_process(address);
  return request_head(operation, address, timeout);
}

}  // namespace

QueueChannel QueueChannel::create(std::size_t maxsize) {
  if (!runtime_live()) made_in_the_master();
  return QueueChannel(queue_broker().create(maxsize));
}

QueueChannel QueueChannel::create_or_unattached() {
  return runtime_live() ? create(0) : QueueChannel();
}

bool QueueChannel::put(const std::vector<Bytes>& items, Timeout timeout) const {
  if (address_.port == 0) made_in_the_master();
  if (!address_.bounded) {
    Feeder::of_this_process().put(address_, items);
    return true;
  }
  auto request = request_in_order(Operation::put, address_, timeout);
  for (const auto& item : items) queue_wire::append_item(request, item);
  send_request(address_, request);
  queue_wire::Bytes payload;
  return receive_reply(address_, payload) == Status::ok;
}

std::vector<Bytes> QueueChannel::get(std::size_t most, Timeout timeout) const {
  if (address_.port == 0) made_in_the_master();
  Feeder& feeder = Feeder::of_this_process();
  most = std::max<std::size_t>(most, 1);
  if (auto items = feeder.take_read_ahead(address_, most); !items.empty()) return items;
  auto request = request_in_order(Operation::get, address_, timeout);
  constexpr std::size_t kMostPerMessage = std::numeric_limits<std::uint32_t>::max();
  std::size_t window = feeder.read_ahead_window(address_);
  std::size_t asked = most < kMostPerMessage - window ? most + window : kMostPerMessage;
  ByteWriter(request).value(static_cast<std::uint32_t>(asked));
  send_request(address_, request);
  queue_wire::Bytes payload;
  if (receive_reply(address_, payload) != Status::ok) return {};
  auto items = read_reply(address_, payload, queue_wire::split_batch);
  if (items.size() > most) {
    feeder.keep_read_ahead(address_, {std::make_move_iterator(items.begin() + most),
                                      std::make_move_iterator(items.end())});
    items.resize(most);
  }
  return items;
}

bool QueueChannel::poll(Timeout timeout) const {
  auto request = request_in_order(Operation::poll, address_, timeout);
  if (Feeder::read_ahead_in_this_process(address_) > 0) return true;
  send_request(address_, request);
  queue_wire::Bytes payload;
  return receive_reply(address_, payload) == Status::ok;
}

std::size_t QueueChannel::size() const {
  auto request = request_in_order(Operation::size, address_, std::nullopt);
  send_request(address_, request);
  queue_wire::Bytes payload;
  receive_reply(address_, payload);
  auto size = read_reply(address_, payload, [](std::span<const char> in) {
    return ByteReader(in, "a queue's size").value<std::uint64_t>();
  });
  return size + Feeder::read_ahead_in_this_process(address_);
}

void QueueChannel::flush() const { Feeder::sync_this_process(); }

}  // namespace fiber::detail
