// The sending side of this process's Pipes: a send goes to the broker until the reading end has
// attached (queue_broker.hpp: pipe_send), then over a connection straight to the reading
// process, one per direction, that begins with the direction's id (pipe_receiver.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "fiber/detail/queue_channel.hpp"
#include "fiber/serialization.hpp"
#include "posix/unique_fd.hpp"

namespace fiber::detail {

class PipeSender {
 public:
  static PipeSender& of_this_process();  // again in a forked child

  // Throws fiber::Error if the reading process is gone, or the broker.
  void send(const QueueAddress& direction, const Bytes& item);

 private:
  PipeSender() = default;

  std::mutex mutex_;
  std::map<std::uint64_t, posix::UniqueFd> direct_;  // direction id -> its reader
};

}  // namespace fiber::detail
