// Waiting in C++ without the GIL, in slices, so that Ctrl-C reaches a waiting Python caller:
// Python runs its signal handlers only when its main thread asks (PyErr_CheckSignals), and the
// KeyboardInterrupt they raise then leaves the wait.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace fiber::python {

// How soon a waiting caller sees a signal.
inline constexpr std::chrono::milliseconds kSignalCheck{100};

// Calls `wait_for(slice)` (true once what it waits for is there; called without the GIL) until
// it is there or `timeout` seconds have passed (none: no limit); returns whether it is there.
// Throws pybind11::error_already_set if a signal handler raised meanwhile. Called with the GIL.
template <class WaitFor>
bool wait_interruptibly(WaitFor wait_for, std::optional<double> timeout) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  if (timeout) {
    deadline = Clock::now() +
               std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*timeout));
  }
  for (;;) {
    Clock::duration slice = kSignalCheck;
    if (deadline) slice = std::clamp(*deadline - Clock::now(), Clock::duration::zero(), slice);
    bool there = false;
    {
      pybind11::gil_scoped_release unlocked;
      there = wait_for(slice);
    }
    if (there) return true;
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
    if (deadline && Clock::now() >= *deadline) return false;
  }
}

}  // namespace fiber::python
