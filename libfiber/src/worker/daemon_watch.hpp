// Whether the worker's node daemon (Open MPI's orted, which started it and is its parent) is
// still there. Without it the node can take no spawn, and any spawn of the job would end the whole
// job (docs/platform.md, "A lost node forbids spawns"): a worker that outlives its daemon leaves,
// so that the master takes it, and so its node, for lost rather than spawning.
#pragma once

#include <sys/types.h>

#include <chrono>

namespace fiber::detail {

class DaemonWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // How often the parent is looked at (a system call).
  static constexpr auto kLookPeriod = std::chrono::milliseconds(100);

  // Watches the parent if it is an orted (a worker started otherwise has none to watch).
  DaemonWatch();
  // True once the daemon has gone (this process was handed to another parent), looked at once
  // every kLookPeriod.
  bool gone(Clock::time_point now);
  // The same, looked at now (before the worker says that its node lives).
  bool gone_now() const;

 private:
  pid_t daemon_ = 0;  // 0: nothing watched
  Clock::time_point next_look_{};
};

}  // namespace fiber::detail
