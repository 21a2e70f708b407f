// fiber::Pipe: Python's multiprocessing.Pipe, two connected ends, each passed to a Process or a
// task as an argument.
//
//   auto [learner_end, actor_end] = fiber::Pipe<Message>();     // duplex
//   actor_end.send(m);  learner_end.poll(1s);  learner_end.recv();
//   auto [reader, writer] = fiber::Pipe<Message>(false);        // one-way: reader <- writer
//
// Each direction is a fiber::Queue on the master's broker (queue.hpp): what was sent stays there
// for the other end, whatever becomes of the sender.
#pragma once

#include <chrono>
#include <stdexcept>
#include <utility>

#include "fiber/queue.hpp"

namespace fiber {

template <class T>
class Connection {
 public:
  Connection() = default;  // to be read from a task's arguments
  Connection(Queue<T> inbox, Queue<T> outbox, bool readable, bool writable)
      : inbox_(std::move(inbox)),
        outbox_(std::move(outbox)),
        readable_(readable),
        writable_(writable) {}

  // Throws std::logic_error on the reading end of a one-way pipe.
  void send(const T& value) {
    if (!writable_) throw std::logic_error("fiber: this end of a one-way Pipe only receives");
    outbox_.put(value);
  }
  // Waits for what the other end sent. Throws std::logic_error on the writing end of a one-way
  // pipe.
  T recv() {
    check_readable();
    return inbox_.get();
  }
  // As recv(), but throws fiber::Empty if nothing came within `timeout`.
  template <class Rep, class Period>
  T recv(std::chrono::duration<Rep, Period> timeout) {
    check_readable();
    return inbox_.get(timeout);
  }
  // True if something is there to recv(), waiting at most `timeout` for it.
  template <class Rep = long, class Period = std::milli>
  bool poll(std::chrono::duration<Rep, Period> timeout = std::chrono::milliseconds{0}) {
    check_readable();
    return inbox_.poll(timeout);
  }

  bool readable() const { return readable_; }
  bool writable() const { return writable_; }

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& inbox_& outbox_& readable_& writable_;
  }

 private:
  void check_readable() const {
    if (!readable_) throw std::logic_error("fiber: this end of a one-way Pipe only sends");
  }

  Queue<T> inbox_;
  Queue<T> outbox_;
  bool readable_ = false;
  bool writable_ = false;
};

// Two ends; duplex: each sends to the other. One-way: the first receives what the second sends.
template <class T>
std::pair<Connection<T>, Connection<T>> Pipe(bool duplex = true) {
  Queue<T> to_first, to_second;
  return {Connection<T>(to_first, to_second, true, duplex),
          Connection<T>(to_second, to_first, duplex, true)};
}

}  // namespace fiber
