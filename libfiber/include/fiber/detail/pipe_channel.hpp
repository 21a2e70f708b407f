// The untyped side of fiber::Pipe: one direction of a pipe, byte strings from the ends that send
// to the one end that reads it. What is sent before the reading end's process first reads waits
// on the master's queue broker; from then on, senders connect straight to the reading process
// (libfiber/src/queue/pipe_receiver.hpp), which waits for them with a short busy poll first.
#pragma once

#include <optional>

#include "fiber/detail/queue_channel.hpp"
#include "fiber/export.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

class FIBER_EXPORT PipeChannel {
 public:
  using Timeout = QueueChannel::Timeout;

  PipeChannel() = default;  // to be read from an archive
  // A new direction, on the master's broker. Only in the master, with a live fiber::Runtime.
  static PipeChannel create();

  // Returns once the item is with the reading end's process (or the broker, before it reads).
  void send(const Bytes& item) const;
  // The next item; empty if none came within `timeout`. The first call in a process makes it
  // the reading one (fiber::Error if another process reads this direction).
  std::optional<Bytes> receive(Timeout timeout) const;
  // True if an item is there within `timeout`, without taking it.
  bool poll(Timeout timeout) const;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& address_;
  }

 private:
  explicit PipeChannel(QueueAddress address) : address_(std::move(address)) {}
  QueueAddress address_;
};

}  // namespace fiber::detail
