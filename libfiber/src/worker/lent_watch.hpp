// How a worker whose task process is lent to the master (a lane) watches it. The worker is off
// every task's path then: it sleeps in poll until its task process dies or the master rings its
// doorbell (shm/lane_doorbell.hpp), and looks at MPI at least every kNap anyway while the task
// process has work (the master may die; at most half the heartbeat interval). While it has none
// (the pool holds the worker between calls) the worker looks only every two heartbeat
// intervals, at most kIdleNap: the master rings for its messages, and work it writes into the
// lane is seen within a quarter of the worker_timeout, heartbeats following (docs/design.md,
// "Idle workers sleep"). For kAwake after a message or a ring, and while MPI has work for it (a
// send not complete, a large body coming), it looks every kPoll instead: a message whose
// transfer needs this side's progress (a rendezvous) completes without another ring. It
// heartbeats while the task process has work, and once after it did not look for longer than a
// heartbeat past its longest nap (stopped, starved): a master that took it for lost meanwhile
// hears that it lives.
#pragma once

#include <chrono>

namespace fiber::detail {

class LentWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kNap = std::chrono::milliseconds(100);
  static constexpr auto kIdleNap = std::chrono::seconds(2);
  static constexpr int kIdleNapHeartbeats = 2;
  static constexpr auto kPoll = std::chrono::milliseconds(1);
  static constexpr auto kAwake = std::chrono::milliseconds(20);

  // Lent now, to heartbeat every `heartbeat` while its task process has work.
  LentWatch(Clock::duration heartbeat, Clock::time_point now)
      : heartbeat_(heartbeat), last_look_(now) {}

  // A message came from the master, or its doorbell rang.
  void message_came(Clock::time_point now) { last_message_ = now; }
  // How long to sleep before the next look, given whether MPI and the task process have work.
  std::chrono::milliseconds nap(bool mpi_busy, bool task_busy, Clock::time_point now) const;
  // A look, after the sleep: whether a heartbeat is due, given whether the task process has work
  // and when the worker last sent the master anything.
  bool look(bool task_busy, Clock::time_point last_sent, Clock::time_point now);

 private:
  std::chrono::milliseconds idle_nap() const;

  Clock::duration heartbeat_;
  Clock::time_point last_look_;
  Clock::time_point last_message_{};
};

}  // namespace fiber::detail
