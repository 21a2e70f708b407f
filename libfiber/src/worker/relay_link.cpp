#include "worker/relay_link.hpp"

#include <boost/mpi/exception.hpp>

#include <chrono>
#include <thread>

#include "log.hpp"
#include "wire/messages.hpp"

namespace fiber::detail {
namespace {

// How long a relay waits at the end for its siblings to take what it forwarded.
constexpr auto kFinishWait = std::chrono::seconds(1);
constexpr auto kFinishPoll = std::chrono::milliseconds(1);

}  // namespace

RelayLink::RelayLink()
    : spawn_(MPI_COMM_WORLD, boost::mpi::comm_attach), alone_(spawn_.size() < 2) {
  if (alone_) return;
  // A failed send to a sibling is an error returned (Boost.MPI throws it), not MPI's abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void RelayLink::forward(std::span<const RelayHop> route, std::span<const char> entry) {
  if (alone_ || failed_) return;  // the master sends it itself once this worker is taken for lost
  std::shared_ptr<const Bytes> to_siblings;  // the entry with an empty route, for every sibling
  for (std::size_t i = 0; i < route.size(); i += 1 + route[i].descendants) {
    auto onward = route.subspan(i + 1, route[i].descendants);
    std::shared_ptr<const Bytes> message;
    if (onward.empty()) {
      if (!to_siblings)
        to_siblings = std::make_shared<const Bytes>(encode_message(Relay{{}, entry}));
      message = to_siblings;
    } else {
      message = std::make_shared<const Bytes>(
          encode_message(Relay{{onward.begin(), onward.end()}, entry}));
    }
    std::int32_t rank = route[i].rank;
    try {
      forwards_.push_back({spawn_.isend(rank, kRelayTag, *message), message});
    } catch (const boost::mpi::exception& error) {
      // The master sends the entry itself if this worker is lost; a send that fails here while it
      // lives is a broken connection to that sibling, which its own channel will show too.
      log::warn("a broadcast could not be relayed to rank {} of this spawn: {}", rank,
                error.what());
    }
  }
}

std::optional<Bytes> RelayLink::take() {
  if (alone_ || failed_) return std::nullopt;
  try {
    std::erase_if(forwards_, [](Forward& f) { return f.request.test().has_value(); });
  } catch (const boost::mpi::exception& error) {
    // Relays stop here; the master sends what a lost relay did not deliver.
    log::warn("relayed broadcasts between this spawn's workers failed: {}", error.what());
    failed_ = true;
    return std::nullopt;
  }
  receive_arrived();
  return failed_ ? std::nullopt : take_received();
}

void RelayLink::receive_arrived() {
  while (true) {
    int matched = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int count = 0;
    if (MPI_Improbe(MPI_ANY_SOURCE, kRelayTag, MPI_COMM_WORLD, &matched, &message, &status) !=
            MPI_SUCCESS ||
        (matched && MPI_Get_count(&status, MPI_CHAR, &count) != MPI_SUCCESS)) {
      log::warn("relayed broadcasts between this spawn's workers failed: a probe failed");
      failed_ = true;
      return;
    }
    if (!matched) return;
    auto incoming = std::make_unique<Incoming>();
    incoming->source = status.MPI_SOURCE;
    incoming->bytes.resize(static_cast<std::size_t>(count));
    if (MPI_Imrecv(incoming->bytes.data(), count, MPI_CHAR, &message, &incoming->request) !=
        MPI_SUCCESS) {
      log::warn("a broadcast relayed by rank {} of this spawn could not be received",
                incoming->source);
      continue;
    }
    incoming_.push_back(std::move(incoming));
  }
}

std::optional<Bytes> RelayLink::take_received() {
  for (auto at = incoming_.begin(); at != incoming_.end(); ++at) {
    Incoming& incoming = **at;
    int done = 0;
    int rc = MPI_Test(&incoming.request, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done) continue;
    if (rc != MPI_SUCCESS) {
      // Its relay died while sending it (UCX says so once it gives up on the connection).
      log::warn(
          "a broadcast relayed by rank {} of this spawn did not arrive whole; the master "
          "sends it once it takes that relay for lost",
          incoming.source);
      incoming_.erase(at);  // (a request that ends in an error is complete: MPI is done with it)
      return std::nullopt;
    }
    Bytes message = std::move(incoming.bytes);
    incoming_.erase(at);
    return message;
  }
  return std::nullopt;
}

void RelayLink::finish() {
  if (alone_) return;
  while (take()) {
  }
  auto deadline = std::chrono::steady_clock::now() + kFinishWait;
  while (!forwards_.empty() && std::chrono::steady_clock::now() < deadline) {
    while (take()) {
    }
    std::this_thread::sleep_for(kFinishPoll);
  }
  // Sends a sibling never took (it left first), and receives from a relay that never finished
  // (it died), may still be touched by MPI: their buffers live as long as the process.
  static auto* unfinished = new std::vector<Forward>;
  for (auto& forward : forwards_) unfinished->push_back(std::move(forward));
  forwards_.clear();
  static auto* unreceived = new std::vector<std::unique_ptr<Incoming>>;
  for (auto& incoming : incoming_) unreceived->push_back(std::move(incoming));
  incoming_.clear();
}

}  // namespace fiber::detail
