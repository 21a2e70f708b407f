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

  // In the master: a process given this direction's reading end (a fiber::Process's argument)
  // starts, and ends. Once all have ended and none read it, what waits for it is dropped and a
  // send throws fiber::Error, as once a reading process has ended, until another process reads.
  void reader_starts() const;
  void reader_ended() const;

  // A readable end being serialized with this direction: a fiber::Process collects those of
  // its arguments on its thread (libfiber/src/queue/process_read_ends.hpp).
  static void note_read_end(const PipeChannel& direction);

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& address_;
  }

 private:
  explicit PipeChannel(QueueAddress address) : address_(std::move(address)) {}
  QueueAddress address_;
};

}  // namespace fiber::detail
