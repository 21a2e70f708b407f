// How a polling loop waits when nothing happened: MPI offers no blocking wait that also wakes on
// other events, so loops poll. Right after activity they poll without a system call (the next
// message is usually microseconds away, and a sched_yield costs about as much); then they spin
// with sched_yield (which lets oversubscribed processes run); after spin_for of quiet they sleep
// for a growing fraction of the quiet time, capped, so an idle process costs ~0 % CPU while the
// added latency stays a small fraction (1/kSleepFraction) of the wait.
#pragma once

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace fiber::detail {

class Backoff {
 public:
  using Clock = std::chrono::steady_clock;

  // Quiet shorter than this: poll without a system call.
  static constexpr auto kBusyPoll = std::chrono::microseconds(20);
  // CPU pause instructions per pause while busy polling.
  static constexpr int kBusyPollSpins = 16;
  // Asleep, a pause lasts this fraction of the quiet time (capped).
  static constexpr int kSleepFraction = 32;

  enum class Regime { busy_poll, yield, sleep };
  struct Pause {
    Regime regime;
    Clock::duration sleep;  // for Regime::sleep
  };

  Backoff(Clock::duration spin_for, Clock::duration max_sleep)
      : spin_for_(spin_for), max_sleep_(max_sleep) {}

  void activity() { last_activity_ = Clock::now(); }
  // How long since the last activity.
  Clock::duration quiet() const { return Clock::now() - last_activity_; }

  void pause() const { pause(max_sleep_); }

  // As pause(), with another cap on the sleep (e.g. longer for a parked worker).
  void pause(Clock::duration max_sleep) const {
    Pause chosen = pause_after(Clock::now() - last_activity_, max_sleep);
    switch (chosen.regime) {
      case Regime::busy_poll:
        for (int i = 0; i < kBusyPollSpins; ++i) cpu_relax();
        break;
      case Regime::yield:
        sched_yield();
        break;
      case Regime::sleep:
        std::this_thread::sleep_for(chosen.sleep);
        break;
    }
  }

  // What a pause does after `quiet` without activity.
  Pause pause_after(Clock::duration quiet, Clock::duration max_sleep) const {
    if (quiet < kBusyPoll) return {Regime::busy_poll, {}};
    if (quiet < spin_for_) return {Regime::yield, {}};
    return {Regime::sleep, std::min<Clock::duration>(max_sleep, quiet / kSleepFraction)};
  }

 private:
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  Clock::duration spin_for_;
  Clock::duration max_sleep_;
  Clock::time_point last_activity_ = Clock::now();
};

}  // namespace fiber::detail
