// A worker's link to the other workers of its spawn (their MPI_COMM_WORLD), for the broadcasts
// that cross the network once per node (dispatch/broadcast_routes.hpp): the relay forwards a
// broadcast's run entry to its siblings, and a sibling takes what its relay forwarded. Typed
// point-to-point over Boost.MPI (one message per entry: a vector of bytes, received through a
// matched probe), which fits here, unlike the master's channels (docs/design.md, "Where
// Boost.MPI is used").
#pragma once

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/request.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fiber/serialization.hpp"

namespace fiber::detail {

class RelayLink {
 public:
  RelayLink();

  // Sends `entry` to each of `ranks` (ranks of this spawn); the sends complete in the background
  // (progress()).
  void forward(std::shared_ptr<const Bytes> entry, std::span<const std::int32_t> ranks);
  // Completes what it can of the forwards, and returns an entry a relay forwarded here, if one
  // arrived.
  std::optional<Bytes> take();
  // At the end: discards what relays still forwarded here, and waits for this worker's own
  // forwards to be taken, at most kFinishWait (a sibling might have left first).
  void finish();

 private:
  void post_receive();

  boost::mpi::communicator spawn_;
  bool alone_;           // a spawn of one: nobody to relay to or from
  bool failed_ = false;  // an MPI call between the workers failed: no more relaying
  Bytes incoming_;
  std::optional<boost::mpi::request> receive_;
  struct Forward {
    boost::mpi::request request;
    std::shared_ptr<const Bytes> entry;  // sent in place: kept until the send completes
  };
  std::vector<Forward> forwards_;
};

}  // namespace fiber::detail
