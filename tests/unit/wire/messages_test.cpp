// The control messages (wire/messages.hpp): each one decodes to what was encoded, every field;
// every prefix of an encoding shorter than the whole, and an encoding with a byte too many, is
// refused with a ProtocolError that names the message.
#include "wire/messages.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wire/run_entry.hpp"

namespace fiber::detail {
namespace {

// Longer than one eager MPI message: a host or a reason has no size limit of its own.
const std::string kLongText(100000, 'h');

// A run entry for Replay and Relay to carry.
Bytes run_entry(std::uint64_t chunk_id) {
  const std::vector<std::uint64_t> offsets{0, 3, 5};
  const std::string items = "abcde";
  Bytes entry;
  RunEntryParts{{chunk_id, 0, 0, kRunBroadcast, 0}, "broadcast_task", offsets, items}.append_to(
      entry);
  return entry;
}

// The message of the ProtocolError that decoding `body` throws ("no error" if none).
template <class Message>
std::string refusal_of(std::span<const char> body) {
  try {
    decode_message<Message>(body);
  } catch (const ProtocolError& error) {
    return error.what();
  }
  return "no error";
}

// Every prefix of `message`'s encoding shorter than the whole is refused as `cut_short` says
// (or, inside the entry of a Replay or a Relay, as its run entry's `entry_cut_short`), and the
// encoding with a byte more as past its end.
template <class Message>
void expect_only_the_whole_decodes(const Message& message, const std::string& cut_short,
                                   const std::string& past_end,
                                   const std::string& entry_cut_short = "") {
  Bytes body = encode_message(message);
  for (std::size_t size = 0; size < body.size(); ++size) {
    std::string refusal = refusal_of<Message>(std::span<const char>(body).first(size));
    if (refusal != cut_short) {
      EXPECT_EQ(refusal, entry_cut_short) << "prefix of " << size;
    }
  }
  body.push_back('!');
  EXPECT_EQ(refusal_of<Message>(body), past_end);
}

TEST(Messages, EachStructSaysItsKind) {
  EXPECT_EQ(Hello::kind, MessageKind::hello);
  EXPECT_EQ(Welcome::kind, MessageKind::welcome);
  EXPECT_EQ(Shutdown::kind, MessageKind::shutdown);
  EXPECT_EQ(LaneOpen::kind, MessageKind::lane_open);
  EXPECT_EQ(LaneAnswer::kind, MessageKind::lane);
  EXPECT_EQ(LaneLost::kind, MessageKind::lane_lost);
  EXPECT_EQ(LaneKill::kind, MessageKind::lane_kill);
  EXPECT_EQ(Replay::kind, MessageKind::replay);
  EXPECT_EQ(Relay::kind, MessageKind::relay);
}

TEST(Messages, HelloRoundTripsAndOnlyWhole) {
  Hello hello = decode_message<Hello>(encode_message(
      Hello{-1234567890123, kLongText, 54321, "10.0.0.7 127.0.0.1", "0,1,2,3", "4,5"}));
  EXPECT_EQ(hello.pid, -1234567890123);
  EXPECT_EQ(hello.host, kLongText);
  EXPECT_EQ(hello.doorbell_port, 54321u);
  EXPECT_EQ(hello.doorbell_addresses, "10.0.0.7 127.0.0.1");
  EXPECT_EQ(hello.cpus, "0,1,2,3");
  EXPECT_EQ(hello.gpus, "4,5");
  EXPECT_EQ(decode_message<Hello>(encode_message(Hello{42, "", 0, "", "", ""})).host, "");
  expect_only_the_whole_decodes(Hello{42, "node7", 1, "10.0.0.7", "0", ""},
                                "fiber: a hello message was cut short",
                                "fiber: a hello message has 1 byte past its end");
}

TEST(Messages, WelcomeRoundTripsAndOnlyWhole) {
  Welcome welcome =
      decode_message<Welcome>(encode_message(Welcome{-3, kLongText, "2,3", "1", 2, 8'000'000'000}));
  EXPECT_EQ(welcome.id, -3);
  EXPECT_EQ(welcome.run_identity, kLongText);
  EXPECT_EQ(welcome.cpus, "2,3");
  EXPECT_EQ(welcome.gpus, "1");
  EXPECT_EQ(welcome.threads, 2u);
  EXPECT_EQ(welcome.memory_limit, 8'000'000'000u);
  expect_only_the_whole_decodes(Welcome{7, "run-1", "", "", 0, 0},
                                "fiber: a welcome message was cut short",
                                "fiber: a welcome message has 1 byte past its end");
}

TEST(Messages, ShutdownRoundTripsBothWaysAndOnlyWhole) {
  EXPECT_TRUE(decode_message<Shutdown>(encode_message(Shutdown{true})).disconnect);
  EXPECT_FALSE(decode_message<Shutdown>(encode_message(Shutdown{false})).disconnect);
  expect_only_the_whole_decodes(Shutdown{true}, "fiber: a shutdown message was cut short",
                                "fiber: a shutdown message has 1 byte past its end");
}

TEST(Messages, LaneOpenRoundTripsAndOnlyWhole) {
  LaneOpen open = decode_message<LaneOpen>(encode_message(LaneOpen{std::uint64_t{1} << 40, 1250}));
  EXPECT_EQ(open.lane, std::uint64_t{1} << 40);
  EXPECT_EQ(open.heartbeat_ms, 1250u);
  expect_only_the_whole_decodes(LaneOpen{3, 100}, "fiber: a lane_open message was cut short",
                                "fiber: a lane_open message has 1 byte past its end");
}

TEST(Messages, ALentLaneAnswerRoundTripsAndOnlyWhole) {
  LaneAnswer answer = decode_message<LaneAnswer>(encode_message(LaneAnswer::lent(9, 17, 23)));
  EXPECT_TRUE(answer.is_lent());
  EXPECT_EQ(answer.lane, 9u);
  EXPECT_EQ(answer.memory_fd, 17);
  EXPECT_EQ(answer.doorbell_fd, 23);
  EXPECT_EQ(answer.refusal, "");
  expect_only_the_whole_decodes(LaneAnswer::lent(9, 0, 1), "fiber: a lane message was cut short",
                                "fiber: a lane message has 1 byte past its end");
}

TEST(Messages, ARefusedLaneAnswerRoundTripsWithItsReasonAndOnlyWhole) {
  LaneAnswer answer = decode_message<LaneAnswer>(encode_message(LaneAnswer::refused(4, kLongText)));
  EXPECT_FALSE(answer.is_lent());
  EXPECT_EQ(answer.lane, 4u);
  EXPECT_EQ(answer.refusal, kLongText);
  expect_only_the_whole_decodes(LaneAnswer::refused(4, "no memfd here"),
                                "fiber: a lane message was cut short",
                                "fiber: a lane message has 1 byte past its end");
}

TEST(Messages, LaneLostRoundTripsAndOnlyWhole) {
  LaneLost lost = decode_message<LaneLost>(encode_message(LaneLost{5, kLongText}));
  EXPECT_EQ(lost.lane, 5u);
  EXPECT_EQ(lost.reason, kLongText);
  expect_only_the_whole_decodes(LaneLost{5, "the task process was killed by signal 9"},
                                "fiber: a lane_lost message was cut short",
                                "fiber: a lane_lost message has 1 byte past its end");
}

TEST(Messages, LaneKillRoundTripsAndOnlyWhole) {
  LaneKill kill =
      decode_message<LaneKill>(encode_message(LaneKill{6, std::uint64_t{1} << 50, 4000000000u}));
  EXPECT_EQ(kill.lane, 6u);
  EXPECT_EQ(kill.chunk, std::uint64_t{1} << 50);
  EXPECT_EQ(kill.item, 4000000000u);
  expect_only_the_whole_decodes(LaneKill{6, 7, 8}, "fiber: a lane_kill message was cut short",
                                "fiber: a lane_kill message has 1 byte past its end");
}

TEST(Messages, ReplayRoundTripsItsEntryInPlaceAndOnlyWhole) {
  Bytes entry = run_entry(12);
  Bytes body = encode_message(Replay{8, entry});
  Replay replay = decode_message<Replay>(body);
  EXPECT_EQ(replay.lane, 8u);
  EXPECT_EQ(Bytes(replay.entry.begin(), replay.entry.end()), entry);
  EXPECT_EQ(replay.entry.data() + replay.entry.size(), body.data() + body.size());
  EXPECT_EQ(RunBody(replay.entry).header().chunk_id, 12u);
  expect_only_the_whole_decodes(Replay{8, entry}, "fiber: a replay message was cut short",
                                "fiber: a replay message's run entry has 1 byte past its end",
                                "fiber: a replay message's run entry was cut short");
}

TEST(Messages, RelayRoundTripsItsRouteAndEntryAndOnlyWhole) {
  Bytes entry = run_entry(13);
  const std::vector<RelayHop> route{{1, 2}, {2, 0}, {3, 0}, {5, 0}};
  Bytes body = encode_message(Relay{route, entry});
  Relay relay = decode_message<Relay>(body);
  ASSERT_EQ(relay.route.size(), route.size());
  for (std::size_t i = 0; i < route.size(); ++i) {
    EXPECT_EQ(relay.route[i].rank, route[i].rank);
    EXPECT_EQ(relay.route[i].descendants, route[i].descendants);
  }
  EXPECT_EQ(Bytes(relay.entry.begin(), relay.entry.end()), entry);
  EXPECT_EQ(relay.entry.data() + relay.entry.size(), body.data() + body.size());
  expect_only_the_whole_decodes(Relay{route, entry}, "fiber: a relay message was cut short",
                                "fiber: a relay message's run entry has 1 byte past its end",
                                "fiber: a relay message's run entry was cut short");
}

TEST(Messages, ARelayWithAnEmptyRouteRoundTripsAndOnlyWhole) {
  Bytes entry = run_entry(14);
  Bytes body = encode_message(Relay{{}, entry});
  Relay relay = decode_message<Relay>(body);
  EXPECT_TRUE(relay.route.empty());
  EXPECT_EQ(Bytes(relay.entry.begin(), relay.entry.end()), entry);
  expect_only_the_whole_decodes(Relay{{}, entry}, "fiber: a relay message was cut short",
                                "fiber: a relay message's run entry has 1 byte past its end",
                                "fiber: a relay message's run entry was cut short");
}

TEST(Messages, ARelaysRouteThenItsEntryIsTheWholeMessage) {
  Bytes entry = run_entry(15);
  const std::vector<RelayHop> route{{4, 0}};
  Bytes body = Relay::encode_route(route);
  body.insert(body.end(), entry.begin(), entry.end());
  EXPECT_EQ(body, (encode_message(Relay{route, entry})));
}

TEST(Messages, ARelayRouteThatDoesNotAddUpIsRefused) {
  Bytes entry = run_entry(16);
  // The first hop claims two descendants; only one hop follows it.
  Bytes body = encode_message(Relay{{{1, 2}, {2, 0}}, entry});
  EXPECT_EQ(refusal_of<Relay>(body), "fiber: a relay's route does not add up");
}

}  // namespace
}  // namespace fiber::detail
