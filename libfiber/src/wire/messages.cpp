#include "wire/messages.hpp"

#include <utility>

#include "wire/run_entry.hpp"

namespace fiber::detail {
namespace {

// LaneAnswer::memory_fd of a refusal.
constexpr std::int32_t kRefused = -1;

}  // namespace

LaneAnswer LaneAnswer::lent(std::uint64_t lane, std::int32_t memory_fd, std::int32_t doorbell_fd) {
  return {lane, memory_fd, doorbell_fd, {}};
}

LaneAnswer LaneAnswer::refused(std::uint64_t lane, std::string why) {
  return {lane, kRefused, kRefused, std::move(why)};
}

void LaneAnswer::write(ByteWriter& writer) const {
  writer.value(lane);
  if (is_lent()) {
    writer.value(memory_fd).value(doorbell_fd);
  } else {
    writer.value(kRefused).string(refusal);
  }
}

void LaneAnswer::read(ByteReader& reader) {
  lane = reader.value<std::uint64_t>();
  memory_fd = reader.value<std::int32_t>();
  if (is_lent()) {
    doorbell_fd = reader.value<std::int32_t>();
  } else {
    refusal = reader.string();
  }
}

void Replay::write(ByteWriter& writer) const { writer.value(lane).raw(entry); }

void Replay::read(ByteReader& reader) {
  lane = reader.value<std::uint64_t>();
  entry = reader.rest();
  RunBody(entry, "a replay message's run entry");  // refused if cut short or too long
}

Bytes Relay::encode_route(std::span<const RelayHop> route) {
  Bytes prefix;
  ByteWriter(prefix).value(static_cast<std::uint32_t>(route.size())).values(route);
  return prefix;
}

void Relay::write(ByteWriter& writer) const { writer.raw(encode_route(route)).raw(entry); }

void Relay::read(ByteReader& reader) {
  route = reader.values<RelayHop>(reader.value<std::uint32_t>());
  const std::size_t hops = route.size();
  for (std::size_t i = 0; i < hops; i += 1 + route[i].descendants) {
    if (route[i].descendants >= hops - i) {
      throw ProtocolError("fiber: a relay's route does not add up");
    }
  }
  entry = reader.rest();
  RunBody(entry, "a relay message's run entry");  // refused if cut short or too long
}

}  // namespace fiber::detail
