// The sending side of this process's Pipes: a send goes to the broker until the reading end has
// attached (queue_broker.hpp: pipe_send), then over a connection straight to the reading
// process, one per direction, that begins with the direction's id (pipe_receiver.hpp). On the
// reader's host the connection is a Unix-domain socket that also passes a shared-memory ring
// (pipe_ring.hpp), and the values go through the ring.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "fiber/bytes.hpp"
#include "fiber/detail/queue_channel.hpp"
#include "posix/unique_fd.hpp"
#include "shm/pipe_ring.hpp"
#include "wire/queue_messages.hpp"

namespace fiber::detail {

class PipeSender {
 public:
  static PipeSender& of_this_process();  // again in a forked child

  // Throws fiber::Error if the reading process is gone, or the broker.
  void send(const QueueAddress& direction, const Bytes& item);

 private:
  PipeSender() = default;

  struct Direct {
    posix::UniqueFd socket;
    std::unique_ptr<PipeRing> ring;  // on the reader's host
  };
  Direct connect(const QueueAddress& direction, const queue_wire::Endpoint& reader);
  // False if the reader is gone.
  static bool send_through(Direct& direct, std::span<const char> frame);

  std::mutex mutex_;
  std::map<std::uint64_t, Direct> direct_;  // direction id -> its reader
};

}  // namespace fiber::detail
