// The flags every program of the framework overhead test takes (sleep_floor, mpi_rounds,
// fiber_overhead), with the protocol's defaults: durations of 1 s to 100 us, an ideal total of
// 1 s per measurement, the best of 3. tasks = total x 5 / duration (all workers' tasks; never
// fewer than the workers), run as tasks / workers rounds.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace fiber_benchmarks {

struct ProtocolOptions {
  double total_seconds = 1.0;
  std::vector<double> task_seconds{1.0, 0.1, 0.01, 0.001, 0.0001};
  int repeats = 3;
};

inline void add_protocol_options(CLI::App& app, ProtocolOptions& options) {
  app.add_option("--total", options.total_seconds, "ideal total seconds of each measurement")
      ->check(CLI::Range(1e-3, 1e4))
      ->capture_default_str();
  app.add_option("--task-seconds", options.task_seconds, "task durations in seconds")
      ->check(CLI::Range(1e-6, 100.0))
      ->capture_default_str();
  app.add_option("--repeats", options.repeats, "best of this many")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
}

inline long long protocol_tasks(const ProtocolOptions& options, double task_seconds, int workers) {
  return std::max<long long>(workers, std::llround(options.total_seconds * workers / task_seconds));
}

}  // namespace fiber_benchmarks
