// The queue broker's messages (wire/queue_messages.hpp), written and read with the codec: a
// request's head, a batch and an endpoint round trip; frames come off a stream once whole; a
// batch or an endpoint cut short is refused with ProtocolError (the broker ends such a
// connection, a client takes it for a broken one).
#include "wire/queue_messages.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fiber::detail {
namespace {

using queue_wire::Bytes;

Bytes bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

TEST(QueueMessages, ARequestsHeadRoundTrips) {
  Bytes request;
  queue_wire::append_request_head(request, {queue_wire::Operation::get, 12, queue_wire::kForever});
  ByteReader reader(request, "a queue request");
  auto head = queue_wire::take_request_head(reader);
  EXPECT_EQ(head.operation, queue_wire::Operation::get);
  EXPECT_EQ(head.queue, 12u);
  EXPECT_EQ(head.timeout_ms, queue_wire::kForever);
  EXPECT_TRUE(reader.at_end());
}

TEST(QueueMessages, ABatchRoundTripsEmptyItemsIncluded) {
  std::vector<Bytes> items{bytes("first"), Bytes(), Bytes(70000, 'x')};
  Bytes payload;
  for (const auto& item : items) queue_wire::append_item(payload, item);
  EXPECT_EQ(queue_wire::split_batch(payload), items);
  EXPECT_TRUE(queue_wire::split_batch({}).empty());
}

TEST(QueueMessages, ABatchCutShortIsRefused) {
  Bytes payload;
  queue_wire::append_item(payload, bytes("one"));
  queue_wire::append_item(payload, bytes("two"));
  for (std::size_t cut : {std::size_t{1}, std::size_t{4}, std::size_t{6}}) {
    Bytes short_payload(payload.begin(), payload.end() - static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(queue_wire::split_batch(short_payload), ProtocolError) << "cut by " << cut;
  }
}

TEST(QueueMessages, AnEndpointRoundTripsAndOnlyWhole) {
  queue_wire::Endpoint endpoint{"node3", "10.0.0.3", 40123, "fiber-pipes-7"};
  Bytes payload;
  queue_wire::append_endpoint(payload, endpoint);
  EXPECT_EQ(queue_wire::take_endpoint(payload), endpoint);
  for (std::size_t size = 0; size < payload.size(); ++size) {
    EXPECT_THROW(queue_wire::take_endpoint(std::span<const char>(payload).first(size)),
                 ProtocolError)
        << "prefix of " << size;
  }
  payload.push_back('!');
  EXPECT_THROW(queue_wire::take_endpoint(payload), ProtocolError);
}

TEST(QueueMessages, FramesComeOffAStreamOnlyOnceWhole) {
  Bytes stream = queue_wire::framed(bytes("hello"));
  Bytes second = queue_wire::framed({});
  stream.insert(stream.end(), second.begin(), second.end());
  std::span<const char> unread(stream);
  auto first = queue_wire::take_frame(unread);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(Bytes(first->begin(), first->end()), bytes("hello"));
  auto empty = queue_wire::take_frame(unread);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
  EXPECT_TRUE(unread.empty());
  std::span<const char> partial = std::span<const char>(stream).first(6);
  EXPECT_FALSE(queue_wire::take_frame(partial).has_value());
  EXPECT_EQ(partial.size(), 6u);  // nothing taken
}

TEST(QueueMessages, ASealedFrameStartsWithTheSizeOfWhatFollows) {
  Bytes frame = queue_wire::frame();
  queue_wire::append_item(frame, bytes("ab"));
  queue_wire::seal_frame(frame);
  std::span<const char> unread(frame);
  auto body = queue_wire::take_frame(unread);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(queue_wire::split_batch(*body), std::vector<Bytes>{bytes("ab")});
}

}  // namespace
}  // namespace fiber::detail
