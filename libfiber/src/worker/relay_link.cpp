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
  post_receive();
}

void RelayLink::post_receive() {
  receive_ = spawn_.irecv(boost::mpi::any_source, kRelayTag, incoming_);
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
    if (!receive_ || !receive_->test()) return std::nullopt;
  } catch (const boost::mpi::exception& error) {
    // Relays stop here; the master sends what a lost relay did not deliver.
    log::warn("relayed broadcasts between this spawn's workers failed: {}", error.what());
    failed_ = true;
    return std::nullopt;
  }
  Bytes message = std::move(incoming_);
  incoming_.clear();
  post_receive();
  return message;
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
  if (receive_) receive_->cancel();
  receive_.reset();
  // Sends a sibling never took (it left first) may still be read by MPI: their buffers live as
  // long as the process.
  static auto* unfinished = new std::vector<Forward>;
  for (auto& forward : forwards_) unfinished->push_back(std::move(forward));
  forwards_.clear();
}

}  // namespace fiber::detail
