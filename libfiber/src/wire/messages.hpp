// The master's and a worker's control messages: one struct per kind of message that carries
// something, and the encode_message that the sender calls and the decode_message that the
// receiver calls (a Channel sends one with send(message): channel.hpp). Run and result messages
// are lists of entries (entry_list.hpp, run_entry.hpp, result_entry.hpp); heartbeat, drop and
// park say all by their kind (message_kind.hpp).
//
// Most messages are their fields back to back: fields() lists them, in their order on the wire,
// once for both ends; a number travels as its bytes, a flag as a u32, a string as a u32 size and
// its bytes (codec.hpp). LaneAnswer, Replay and Relay write and read their own bodies instead.
// decode_message throws ProtocolError, naming the message, on a body cut short and on one that
// goes on past its end (for Replay and Relay, their run entry's end).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "fiber/serialization.hpp"
#include "wire/codec.hpp"
#include "wire/message_kind.hpp"
#include "wire/protocol_error.hpp"

namespace fiber::detail {

// worker -> master, once started: who it is, where its doorbell is (worker_doorbell.hpp: a
// UDP port, 0 for none, and the host's IPv4 addresses, dotted and space-separated), and what its
// node offers shaped workers (worker_shape.hpp): the CPUs it may run on and the node's devices,
// each a list of numbers ("0-3,8" and "0,1").
struct Hello {
  static constexpr MessageKind kind = MessageKind::hello;
  std::int64_t pid;
  std::string host;
  std::uint32_t doorbell_port;
  std::string doorbell_addresses;
  std::string cpus;
  std::string gpus;
  static auto fields(auto& hello) {
    return std::tie(hello.pid, hello.host, hello.doorbell_port, hello.doorbell_addresses,
                    hello.cpus, hello.gpus);
  }
};

// master -> worker, at the runtime's end: exit.
struct Shutdown {
  static constexpr MessageKind kind = MessageKind::shutdown;
  // Whether the master disconnects the worker's spawn; not if a sibling was lost, since the
  // disconnect would wait for it forever: then the worker leaves without.
  bool disconnect;
  static auto fields(auto& shutdown) { return std::tie(shutdown.disconnect); }
};

// master -> worker, once every worker of its spawn said hello: the worker's id, the run's
// identity (it names NodeArray segments), and its shape's part (worker_shape.hpp): the CPUs it
// is bound to and the devices it gets (lists, empty: none), the threads its thread pools are
// told (0: left alone) and its task process's memory limit in bytes (0: none).
struct Welcome {
  static constexpr MessageKind kind = MessageKind::welcome;
  std::int32_t id;
  std::string run_identity;
  std::string cpus;
  std::string gpus;
  std::uint32_t threads;
  std::uint64_t memory_limit;
  static auto fields(auto& welcome) {
    return std::tie(welcome.id, welcome.run_identity, welcome.cpus, welcome.gpus, welcome.threads,
                    welcome.memory_limit);
  }
};

// master -> worker: kill the lane's task process if it still runs item `item` of chunk `chunk`
// (it ran past its timeout); its death is reported as LaneLost.
struct LaneKill {
  static constexpr MessageKind kind = MessageKind::lane_kill;
  std::uint64_t lane;
  std::uint64_t chunk;
  std::uint32_t item;
  static auto fields(auto& kill) { return std::tie(kill.lane, kill.chunk, kill.item); }
};

// The lane (docs/design.md, "The lane"): the master writes a worker's chunks into its task
// process's rings and reads the answers itself, the worker only watches the task process.
// master -> worker: once the chunks sent before are answered, have a task process running (a new
// one replays what the master wrote into no lane) and answer with a LaneAnswer; then write
// nothing into the rings, and heartbeat at most `heartbeat_ms` apart while they hold work.
struct LaneOpen {
  static constexpr MessageKind kind = MessageKind::lane_open;
  std::uint64_t lane;
  std::uint32_t heartbeat_ms;
  static auto fields(auto& open) { return std::tie(open.lane, open.heartbeat_ms); }
};

// worker -> master: the parked worker's standby task process ran the initializer it kept (its
// last pool's, kRunAhead) and it succeeded. `park` counts the park messages the worker has had,
// so that the master takes the word only of the standby of the worker's latest park.
struct StandbyReady {
  static constexpr MessageKind kind = MessageKind::standby;
  std::uint64_t park;
  static auto fields(auto& ready) { return std::tie(ready.park); }
};

// worker -> master, the answer to a LaneOpen: the descriptors, in the worker, of its task
// process's memory (task_memory.hpp) and of its doorbell (lane_doorbell.hpp); or why it could
// not lend them. On the wire: u64 lane, i32 memory_fd, then i32 doorbell_fd, or for a refusal a
// memory_fd of -1 and the reason (u32 size + text).
struct LaneAnswer {
  static constexpr MessageKind kind = MessageKind::lane;
  std::uint64_t lane;
  std::int32_t memory_fd = -1;  // negative: refused
  std::int32_t doorbell_fd = -1;
  std::string refusal;

  static LaneAnswer lent(std::uint64_t lane, std::int32_t memory_fd, std::int32_t doorbell_fd);
  static LaneAnswer refused(std::uint64_t lane, std::string why);
  bool is_lent() const { return memory_fd >= 0; }
  void write(ByteWriter& writer) const;
  void read(ByteReader& reader);
};

// worker -> master: the lane's task process died (or was killed, as asked).
struct LaneLost {
  static constexpr MessageKind kind = MessageKind::lane_lost;
  std::uint64_t lane;
  std::string reason;
  static auto fields(auto& lost) { return std::tie(lost.lane, lost.reason); }
};

// master -> worker: an initializer's or broadcast's run entry that the master wrote into lane
// `lane`: kept to replay in the task processes of later lanes. On the wire: u64 lane, the entry.
struct Replay {
  static constexpr MessageKind kind = MessageKind::replay;
  std::uint64_t lane;
  std::span<const char> entry;  // decoded: in place in the body
  void write(ByteWriter& writer) const;
  // Also refuses an entry that is no whole run entry.
  void read(ByteReader& reader);
};

// One hop of a relay's route: a rank of the relay's spawn, and how many of the hops after it that
// rank forwards to itself (its own route; 0 for a sibling that only runs the entry).
struct RelayHop {
  std::int32_t rank;
  std::uint32_t descendants;
};

// master -> worker: a broadcast's run entry and the route it goes on
// (dispatch/broadcast_routes.hpp): the worker forwards the entry to each first hop of the route
// with the hops that one forwards itself, and runs it too. Between workers (kRelayTag) the same: a
// route, possibly empty, then the entry. On the wire: u32 hops, the RelayHops, the entry.
struct Relay {
  static constexpr MessageKind kind = MessageKind::relay;
  std::vector<RelayHop> route;
  std::span<const char> entry;  // decoded: in place in the body

  // What comes before the entry: for a sender that sends the entry after it, in place.
  static Bytes encode_route(std::span<const RelayHop> route);
  void write(ByteWriter& writer) const;
  // Also refuses a route whose hops do not add up, and an entry that is no whole run entry.
  void read(ByteReader& reader);
};

// Between the workers of one spawn (their MPI_COMM_WORLD): the tag of a relayed Relay.
inline constexpr int kRelayTag = 3;

namespace message_fields {

template <class Field>
void write(ByteWriter& writer, const Field& field) {
  if constexpr (std::is_same_v<Field, std::string>) {
    writer.string(field);
  } else if constexpr (std::is_same_v<Field, bool>) {
    writer.value(static_cast<std::uint32_t>(field));
  } else {
    writer.value(field);
  }
}

template <class Field>
void read(ByteReader& reader, Field& field) {
  if constexpr (std::is_same_v<Field, std::string>) {
    field = reader.string();
  } else if constexpr (std::is_same_v<Field, bool>) {
    field = reader.value<std::uint32_t>() != 0;
  } else {
    field = reader.value<Field>();
  }
}

}  // namespace message_fields

template <class Message>
Bytes encode_message(const Message& message) {
  Bytes body;
  ByteWriter writer(body);
  if constexpr (requires { Message::fields(message); }) {
    std::apply([&](const auto&... field) { (message_fields::write(writer, field), ...); },
               Message::fields(message));
  } else {
    message.write(writer);
  }
  return body;
}

template <class Message>
Message decode_message(std::span<const char> body) {
  ByteReader reader(body, describe(Message::kind));
  Message message{};
  if constexpr (requires { Message::fields(message); }) {
    std::apply([&](auto&... field) { (message_fields::read(reader, field), ...); },
               Message::fields(message));
  } else {
    message.read(reader);
  }
  reader.expect_end();
  return message;
}

}  // namespace fiber::detail
