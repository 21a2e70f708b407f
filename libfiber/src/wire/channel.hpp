// A Channel: the messages between the master and one worker over their intercommunicator.
//
// A message is a MessageHeader followed by a body (messages.hpp, entry_list.hpp). A message of up
// to kEagerBytes travels as one MPI message on kHeaderTag; a larger one sends the header alone
// (body_follows set) and then the body on kBodyTag in pieces of at most kPieceBytes (MPI counts are
// ints), which the receiver gathers into one buffer.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fiber/serialization.hpp"
#include "mpi/request.hpp"
#include "wire/message_kind.hpp"
#include "wire/worker_doorbell.hpp"

namespace fiber::detail {

class LaneDoorbellRing;

struct MessageHeader {
  MessageKind kind;
  std::uint32_t body_follows;
  std::uint64_t body_size;
};

inline constexpr int kHeaderTag = 1;
inline constexpr int kBodyTag = 2;
inline constexpr std::size_t kEagerBytes = std::size_t{64} * 1024;
inline constexpr std::size_t kPieceBytes = std::size_t{1} << 30;

struct Message {
  MessageKind kind;
  Bytes body;
};

// One peer over an intercommunicator: rank `peer` of its remote group (the master is rank 0 of a
// worker's; the workers of one spawn are ranks 0.. of the master's).
class Channel {
 public:
  explicit Channel(MPI_Comm comm, int peer = 0);
  // Sends still in flight (to a peer that was lost: others are waited for first) are let go:
  // their requests freed, their buffers kept to the end of the process, since MPI may still read
  // them.
  ~Channel();
  Channel(Channel&&) = default;

  MPI_Comm comm() const { return comm_; }
  std::int32_t peer() const { return peer_; }

  // Receiving, one message at a time. The caller owns the request (so that a master can test
  // the requests of all its workers in one MPI_Testsome): post_receive() posts into it, and when
  // it completes, on_received() returns the message, or nothing if more of a large body is due
  // (in which case it posted the next receive into the same request). On a failure (see
  // failure()) no receive is posted and the request is MPI_REQUEST_NULL.
  void post_receive(MPI_Request* request);
  std::optional<Message> on_received(const MPI_Status& status, MPI_Request* request);

  // Sends a message whose body is `parts` back to back. Everything is copied, except the last
  // part of a large body, which is sent in place: `keep_alive` must own the memory it points to.
  void send(MessageKind kind, std::initializer_list<std::span<const char>> parts,
            std::shared_ptr<const void> keep_alive = nullptr);
  void send(MessageKind kind) { send(kind, {}); }
  // Sends one of messages.hpp's messages (encode_message). Its body is the channel's: a large one
  // is sent in place.
  template <class Typed>
  void send(const Typed& message) {
    auto body = std::make_shared<const Bytes>(encode_message(message));
    send(Typed::kind, {*body}, body);
  }
  // Rings `doorbell` after every send from now on (none: stops): the peer sleeps in poll on it.
  void ring_after_sends(std::shared_ptr<const LaneDoorbellRing> doorbell) {
    doorbell_ = std::move(doorbell);
  }
  // Rings `doorbell` after a send that follows kQuietBeforeRing without one: the peer may be
  // asleep in poll on it (docs/design.md, "Idle workers sleep"). Sends in quick succession ring
  // once: the first wakes the peer, which stays awake for kSpinBeforeSleep after each message
  // (Supervisor), longer than the gap to the next.
  void ring_when_quiet(std::optional<WorkerDoorbellRing> doorbell) {
    quiet_doorbell_ = std::move(doorbell);
  }
  static constexpr auto kQuietBeforeRing = std::chrono::milliseconds(2);
  // Whether a large body is being received (its sender waits for this side's progress).
  bool receiving_body() const { return large_.has_value(); }
  // Completes what it can of the sends in flight; true if none is left.
  bool progress_sends();
  void wait_sends();

  // An MPI call on this channel failed (its peer died, or the connection broke) or the peer sent
  // something that is not a message: the channel says why and stops communicating (sends are
  // dropped, nothing is received). Its owner takes the peer for lost. Sends left in flight keep
  // their buffers for as long as the channel lives.
  const std::optional<std::string>& failure() const { return failure_; }
  void fail(std::string why);
  // How many channels of this process have failed so far: a look that needs no scan of them all.
  static std::uint64_t failures_so_far() { return failures_.load(std::memory_order_relaxed); }

 private:
  struct PendingSend {
    mpi::Request request;
    std::shared_ptr<const Bytes> buffer;
    std::shared_ptr<const void> keep_alive;
  };
  void start_send(const char* data, std::size_t size, int tag, std::shared_ptr<const Bytes> buffer,
                  std::shared_ptr<const void> keep_alive);

  MPI_Comm comm_;
  int peer_;
  std::vector<char> eager_;
  std::optional<MessageHeader> large_;  // header of a large body being received
  Bytes large_body_;
  std::size_t large_received_ = 0;
  std::deque<PendingSend> sends_;
  // After a send: rings the doorbells due.
  void ring_after_send();

  std::shared_ptr<const LaneDoorbellRing> doorbell_;
  std::optional<WorkerDoorbellRing> quiet_doorbell_;
  std::chrono::steady_clock::time_point last_send_{};  // (kept with a quiet_doorbell_ only)
  std::optional<std::string> failure_;
  static inline std::atomic<std::uint64_t> failures_{0};
};

}  // namespace fiber::detail
