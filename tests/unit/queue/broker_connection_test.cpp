// A broker's reply read with read_reply (broker_connection.hpp): a whole payload is what its
// reader makes of it; one cut short is the error of a broken connection to the broker, as a reply
// that never came.
#include "queue/broker_connection.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

const QueueAddress kBroker{"node-1", 4000, 7, false};

TEST(ReadReply, AWholePayloadIsWhatItsReaderMakesOfIt) {
  queue_wire::Bytes payload;
  queue_wire::append_item(payload, std::string("item"));
  auto items = read_reply(kBroker, payload, queue_wire::split_batch);
  EXPECT_EQ(items, (std::vector<queue_wire::Bytes>{{'i', 't', 'e', 'm'}}));
}

TEST(ReadReply, APayloadCutShortIsABrokenConnectionToTheBroker) {
  queue_wire::Bytes payload;
  queue_wire::append_item(payload, std::string("item"));
  payload.pop_back();
  try {
    read_reply(kBroker, payload, queue_wire::split_batch);
    FAIL() << "no error";
  } catch (const ProtocolError&) {
    FAIL() << "the reader's ProtocolError came through";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "fiber: cannot reach the queue broker at node-1:4000 (its reply was cut short); "
                 "has the master's runtime ended?");
  }
}

}  // namespace
}  // namespace fiber::detail
