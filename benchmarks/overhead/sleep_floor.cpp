// The floor of the framework overhead test: one worker's share of the tasks (total / duration
// sleeps) looped in one process, no framework. Sleeping overshoots (timer slack, wake-up), so the
// floor is above the ideal total: what a perfect framework would take on this machine. Same
// durations and totals as fiber_overhead and the Python peers; best of --repeats; CSV on stdout:
//
//   floor,loop,task_seconds,tasks,workers,seconds,measured_tasks
//
// (tasks: all workers' tasks, as in the frameworks' lines; each of the 5 sleeps tasks / 5.)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

constexpr int kWorkers = 5;

}  // namespace

int main(int argc, char** argv) {
  double total_seconds = 1.0;
  std::vector<double> task_seconds{1.0, 0.1, 0.01, 0.001, 0.0001};
  int repeats = 3;
  CLI::App app{"The sleep floor of the framework overhead test: one worker's sleeps in a loop",
               "sleep_floor"};
  app.add_option("--total", total_seconds, "ideal total seconds of each measurement")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--task-seconds", task_seconds, "task durations in seconds")
      ->check(CLI::Range(1e-6, 100.0))
      ->capture_default_str();
  app.add_option("--repeats", repeats, "best of this many")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "sleep_floor: %s (--help lists the options)\n", error.what());
    return 2;
  }
  for (double seconds_per_task : task_seconds) {
    auto duration = std::chrono::microseconds(std::llround(seconds_per_task * 1e6));
    auto tasks =
        std::max<long long>(kWorkers, std::llround(total_seconds * kWorkers / seconds_per_task));
    auto sleeps = tasks / kWorkers;
    double best = 0;
    for (int i = 0; i < repeats; ++i) {
      auto start = std::chrono::steady_clock::now();
      for (long long k = 0; k < sleeps; ++k) std::this_thread::sleep_for(duration);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = i == 0 ? seconds : std::min(best, seconds);
    }
    std::printf("floor,loop,%g,%lld,%d,%.6f,%lld\n", seconds_per_task, tasks, kWorkers, best,
                tasks);
    std::fflush(stdout);
    std::fprintf(stderr, "floor            loop        %8.1f ms x %6lld sleeps %8.3f s\n",
                 seconds_per_task * 1e3, sleeps, best);
  }
  return 0;
}
