// The reading side of this process's Pipes: listeners (TCP, and a Unix-domain socket for senders on
// this host) that the senders of every direction read here connect to (their first frame is the
// direction's id, then one frame per item: u32 size + bytes), and the items that came, per
// direction. A direction is attached on its first read (queue_broker.hpp: pipe_attach), which
// brings what was sent before and tells later senders where to connect. One thread at a time waits
// on the sockets (the others on a condition); it busy-polls for kBusyPoll before it sleeps, as a
// pipe's round trip is a few microseconds.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "fiber/detail/queue_channel.hpp"
#include "fiber/serialization.hpp"
#include "posix/unique_fd.hpp"
#include "shm/pipe_ring.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {

// How long a reader polls its sockets without sleeping before it sleeps in poll.
constexpr std::chrono::microseconds kBusyPoll{50};

class PipeReceiver {
 public:
  static PipeReceiver& of_this_process();  // again in a forked child

  // The next item of `direction` (taken, or left there for a poll); empty if none came within
  // `timeout`. Throws fiber::Error if another process reads `direction`.
  std::optional<Bytes> receive(const QueueAddress& direction, QueueChannel::Timeout timeout,
                               bool take);

 private:
  struct Incoming {
    posix::UniqueFd socket;
    std::optional<std::uint64_t> direction;  // known from its first frame
    queue_wire::Bytes buffer;                // the socket's bytes of frames not yet whole
    std::unique_ptr<PipeRing> ring;          // a sender on this host: the values come here
    queue_wire::Bytes ring_bytes;            // the ring's bytes of frames not yet whole
  };

  PipeReceiver();
  void attach(const QueueAddress& direction);
  // Waits up to `wait` for bytes on any socket, without the lock, and files what came.
  void poll_sockets(std::chrono::microseconds wait, std::unique_lock<std::mutex>& lock);
  // Reads what `incoming`'s socket has (and a ring it passes); false at its end.
  bool read_from(Incoming& incoming);
  // Files the whole frames of `buffer` (the socket's or the ring's bytes); true if values came.
  bool file_frames(Incoming& incoming, queue_wire::Bytes& buffer);
  // Files what the rings hold; true if values came.
  bool drain_rings();
  void set_ring_sleeps(std::uint32_t sleeps);
  void accept_connections(int listener);

  static constexpr std::size_t kListeners = 2;  // TCP, and local for senders on this host
  queue_wire::Endpoint endpoint_;
  std::array<posix::UniqueFd, kListeners> listeners_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  bool polling_ = false;
  std::set<std::uint64_t> attached_;
  std::map<std::uint64_t, std::deque<Bytes>> inboxes_;
  std::list<Incoming> incoming_;
};

}  // namespace fiber::detail
