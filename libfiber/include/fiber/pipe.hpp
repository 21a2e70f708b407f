/// \file
/// fiber::Pipe: Python's multiprocessing.Pipe, two connected ends, each passed to a Process or a
/// task as an argument.
///
///   auto [learner_end, actor_end] = fiber::Pipe<Message>();     // duplex
///   actor_end.send(m);  learner_end.poll(1s);  learner_end.recv();
///   auto [reader, writer] = fiber::Pipe<Message>(false);        // one-way: reader <- writer
///
/// As in Python, send() returns once the value is with the receiving end's process (its socket
/// buffer), whatever becomes of the sender after. What is sent before that process first reads
/// waits on the master's queue broker; then senders connect straight to it, so a round trip is
/// two messages between the two processes (detail/pipe_channel.hpp). An end is read in one
/// process (reading it in a second one throws fiber::Error); any number may send to it.
#pragma once

#include <chrono>
#include <stdexcept>
#include <utility>

#include "fiber/detail/encode_item.hpp"
#include "fiber/detail/pipe_channel.hpp"
#include "fiber/queue.hpp"

namespace fiber {

/// One end of a fiber::Pipe (Python's Connection): send() to the other end, recv() and poll()
/// what it sent. Passed to a Process or a task as an argument, a copy is the same end.
template <class T>
class Connection {
 public:
  Connection() = default;  ///< to be read from a task's arguments
  /// Made by fiber::Pipe; not for user code.
  Connection(detail::PipeChannel inbox, detail::PipeChannel outbox, bool readable, bool writable)
      : inbox_(std::move(inbox)),
        outbox_(std::move(outbox)),
        readable_(readable),
        writable_(writable) {}

  /// Throws std::logic_error on the reading end of a one-way pipe.
  void send(const T& value) {
    if (!writable_) throw std::logic_error("fiber: this end of a one-way Pipe only receives");
    outbox_.send(detail::encode_item(value));
  }
  /// Waits for what the other end sent. Throws std::logic_error on the writing end of a one-way
  /// pipe.
  T recv() { return take(std::nullopt); }
  /// As recv(), but throws fiber::Empty if nothing came within `timeout`.
  template <class Rep, class Period>
  T recv(std::chrono::duration<Rep, Period> timeout) {
    return take(detail::to_timeout(timeout));
  }
  /// True if something is there to recv(), waiting at most `timeout` for it.
  template <class Rep = long, class Period = std::milli>
  bool poll(std::chrono::duration<Rep, Period> timeout = std::chrono::milliseconds{0}) {
    check_readable();
    return inbox_.poll(detail::to_timeout(timeout));
  }

  /// False for the writing end of a one-way pipe.
  bool readable() const { return readable_; }
  /// False for the reading end of a one-way pipe.
  bool writable() const { return writable_; }

  /// Boost.Serialization: how an end travels as a task's or Process's argument.
  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    // A Process given a reading end owns it: its end tells the senders (fiber/process.hpp).
    if constexpr (Archive::is_saving::value) {
      if (readable_) detail::PipeChannel::note_read_end(inbox_);
    }
    archive& inbox_& outbox_& readable_& writable_;
  }

 private:
  void check_readable() const {
    if (!readable_) throw std::logic_error("fiber: this end of a one-way Pipe only sends");
  }
  T take(detail::PipeChannel::Timeout timeout) {
    check_readable();
    auto item = inbox_.receive(timeout);
    if (!item) throw Empty("fiber: nothing came through the Pipe within the timeout");
    return decode<T>(*item, "a Pipe's value");
  }

  detail::PipeChannel inbox_;
  detail::PipeChannel outbox_;
  bool readable_ = false;
  bool writable_ = false;
};

/// Two ends; duplex: each sends to the other. One-way: the first receives what the second sends.
template <class T>
std::pair<Connection<T>, Connection<T>> Pipe(bool duplex = true) {
  auto to_first = detail::PipeChannel::create();
  auto to_second = detail::PipeChannel::create();
  return {Connection<T>(to_first, to_second, true, duplex),
          Connection<T>(to_second, to_first, duplex, true)};
}

}  // namespace fiber
