// A worker's link to the other workers of its spawn (their MPI_COMM_WORLD), for the broadcasts
// that cross the network once per node (dispatch/broadcast_routes.hpp): a relay forwards a
// broadcast's run entry along its route (its siblings, and other nodes' relays with their own
// routes), and a worker takes what a relay forwarded to it. Typed
// point-to-point over Boost.MPI (one message per entry: a vector of bytes), which fits here,
// unlike the master's channels (docs/design.md, "Where Boost.MPI is used"). Messages are received
// with MPI's C API, a matched probe then a receive that does not block: Boost.MPI's receive,
// once a message matches, waits in MPI_Mrecv for all of it, as long as a large body takes and,
// if its relay dies in the middle, until UCX gives up on the connection; meanwhile the worker
// says nothing to the master, which takes it for lost (docs/platform.md, "A relay killed
// mid-message").
#pragma once

#include <mpi.h>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/request.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fiber/serialization.hpp"
#include "wire/messages.hpp"

namespace fiber::detail {

class RelayLink {
 public:
  RelayLink();

  // Sends `entry` along `route`: to each of its first hops, with the hops that one forwards
  // itself (its siblings share one message); the sends complete in the background (take()).
  void forward(std::span<const RelayHop> route, std::span<const char> entry);
  // Completes what it can of the forwards, and returns a relay message (decode_message<Relay>) a
  // relay forwarded here, if one arrived whole. One that fails (its relay died while sending it)
  // is dropped: the master sends what a lost relay did not deliver.
  std::optional<Bytes> take();
  // Whether a forward is still in flight (it may need this side's progress).
  bool forwarding() const { return !forwards_.empty(); }
  // Whether a relayed message is still arriving (its transfer needs this side's progress).
  bool receiving() const { return !incoming_.empty(); }
  // At the end: discards what relays still forwarded here, and waits for this worker's own
  // forwards to be taken, at most kFinishWait (a sibling might have left first).
  void finish();

 private:
  // Starts receiving the relay messages that have begun to arrive.
  void receive_arrived();
  // A relay message received whole, if one is.
  std::optional<Bytes> take_received();

  boost::mpi::communicator spawn_;
  bool alone_;           // a spawn of one: nobody to relay to or from
  bool failed_ = false;  // an MPI call between the workers failed: no more relaying
  struct Incoming {
    int source = 0;
    Bytes bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  // Relay messages being received, in the order they matched; several at once, so that one from
  // a relay that died stays here until UCX reports it while the others go on.
  std::vector<std::unique_ptr<Incoming>> incoming_;
  struct Forward {
    boost::mpi::request request;
    std::shared_ptr<const Bytes> message;  // sent in place: kept until the send completes
  };
  std::vector<Forward> forwards_;
};

}  // namespace fiber::detail
