// How the no-framework round programs (mpi_rounds, lane_rounds) time the paper's mode: for each
// task duration, a warm-up of kWarmUpRounds, then the best of --repeats runs of all its rounds;
// one CSV line per duration on stdout and a readable one on stderr.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "protocol_options.hpp"

namespace fiber_benchmarks {

inline constexpr long long kWarmUpRounds = 10;

// `run_rounds(microseconds, rounds)` runs that many rounds of one task per worker and returns
// the seconds they took; `framework` names the CSV lines.
inline void time_rounds(const ProtocolOptions& options, int workers, const char* framework,
                        const std::function<double(std::int64_t, long long)>& run_rounds) {
  for (double seconds_per_task : options.task_seconds) {
    std::int64_t microseconds = std::llround(seconds_per_task * 1e6);
    long long tasks = protocol_tasks(options, seconds_per_task, workers);
    long long rounds = tasks / workers;
    run_rounds(microseconds, std::min(rounds, kWarmUpRounds));
    double best = 0;
    for (int i = 0; i < options.repeats; ++i) {
      double seconds = run_rounds(microseconds, rounds);
      best = i == 0 ? seconds : std::min(best, seconds);
    }
    std::printf("%s,apply_async,%g,%lld,%d,%.6f,%lld\n", framework, seconds_per_task, tasks,
                workers, best, tasks);
    std::fflush(stdout);
    std::fprintf(stderr, "%-16s apply_async %8.1f ms x %6lld rounds %8.3f s\n", framework,
                 seconds_per_task * 1e3, rounds, best);
  }
}

}  // namespace fiber_benchmarks
