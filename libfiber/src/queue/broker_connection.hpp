// A thread's connection to a queue broker (queue_broker.hpp): one per thread of each process and
// broker, so that a thread blocked in a get does not hold up the others' requests; a forked
// process (a task process) makes its own instead of sharing its parent's.
#pragma once

#include <span>
#include <string>

#include "fiber/detail/queue_channel.hpp"
#include "wire/protocol_error.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {

// The socket of this thread's connection to `address`'s broker, connected on first use.
int broker_socket(const QueueAddress& address);

// The head of a request to `address`'s queue (wire/queue_messages.hpp).
queue_wire::Bytes request_head(queue_wire::Operation operation, const QueueAddress& address,
                               QueueChannel::Timeout timeout);
// Sends a request made with request_head on this thread's connection.
void send_request(const QueueAddress& address, queue_wire::Bytes& request);
// The reply's status, its payload left in `payload`; throws fiber::Error for an unknown queue
// or a broker that is gone or ending.
queue_wire::Status receive_reply(const QueueAddress& address, queue_wire::Bytes& payload);

// A queue used outside the master without having been passed there, or made without a runtime.
[[noreturn]] void made_in_the_master();
[[noreturn]] void broker_gone(const QueueAddress& address, const std::string& why);

// What `read` (a reader of queue_messages.hpp) makes of a reply's payload. A payload cut short is
// a broken connection to the broker: it throws what a reply that never came throws.
template <class Read>
auto read_reply(const QueueAddress& address, std::span<const char> payload, Read read) {
  try {
    return read(payload);
  } catch (const ProtocolError&) {
    broker_gone(address, "its reply was cut short");
  }
}

}  // namespace fiber::detail
