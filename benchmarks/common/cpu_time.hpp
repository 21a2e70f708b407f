// The process's CPU time (every thread), for benchmarks that count CPU rather than wall time.
#pragma once

#include <time.h>

namespace fiber_benchmarks {

inline double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace fiber_benchmarks
