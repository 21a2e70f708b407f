// The floors of the framework overhead test, no framework, same durations and totals as
// fiber_overhead and the Python peers; best of --repeats; CSV on stdout:
//
//   floor,loop,task_seconds,tasks,workers,seconds,measured_tasks
//   floor-rounds,apply_async,task_seconds,tasks,workers,seconds,measured_tasks
//
// floor,loop: one worker's share of the tasks (total / duration sleeps) looped in one process.
// Sleeping overshoots (timer slack, wake-up), so this floor is above the ideal total; it is what
// the targets are stated against. floor-rounds: the paper's mode itself with nothing to send: 5
// threads each sleep once per round and wait at a barrier for the others (a spinning barrier, the
// quickest hand-over). A round lasts as long as its slowest sleep and the last arrival must reach
// the others, so even with no framework this is slower than the loop, most on few cores: the
// part of a framework's ratio to the loop that no framework can remove.
// (tasks: all workers' tasks, as in the frameworks' lines; each of the 5 sleeps tasks / 5.)
#include <CLI/CLI.hpp>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "protocol_options.hpp"

namespace {

constexpr int kWorkers = 5;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double loop_of_sleeps(std::chrono::microseconds duration, long long sleeps) {
  auto start = std::chrono::steady_clock::now();
  for (long long k = 0; k < sleeps; ++k) std::this_thread::sleep_for(duration);
  return seconds_since(start);
}

// kWorkers threads, `rounds` rounds of one sleep each and a barrier.
double rounds_of_sleeps(std::chrono::microseconds duration, long long rounds) {
  std::atomic<int> arrived{0};
  std::atomic<long long> rounds_done{0};
  auto worker = [&] {
    for (long long round = 0; round < rounds; ++round) {
      std::this_thread::sleep_for(duration);
      if (arrived.fetch_add(1) + 1 == kWorkers) {
        arrived.store(0);
        rounds_done.store(round + 1);
      } else {
        while (rounds_done.load() <= round) sched_yield();
      }
    }
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::jthread> threads;
  for (int i = 0; i < kWorkers; ++i) threads.emplace_back(worker);
  threads.clear();  // joins
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  fiber_benchmarks::ProtocolOptions options;
  CLI::App app{"The floors of the framework overhead test: sleeps looped, and rounds of threads",
               "sleep_floor"};
  fiber_benchmarks::add_protocol_options(app, options);
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  for (double seconds_per_task : options.task_seconds) {
    auto duration = std::chrono::microseconds(std::llround(seconds_per_task * 1e6));
    auto tasks = fiber_benchmarks::protocol_tasks(options, seconds_per_task, kWorkers);
    auto sleeps = tasks / kWorkers;
    double loop = 0, rounds = 0;
    for (int i = 0; i < options.repeats; ++i) {
      double seconds = loop_of_sleeps(duration, sleeps);
      loop = i == 0 ? seconds : std::min(loop, seconds);
      seconds = rounds_of_sleeps(duration, sleeps);
      rounds = i == 0 ? seconds : std::min(rounds, seconds);
    }
    std::printf("floor,loop,%g,%lld,%d,%.6f,%lld\n", seconds_per_task, tasks, kWorkers, loop,
                tasks);
    std::printf("floor-rounds,apply_async,%g,%lld,%d,%.6f,%lld\n", seconds_per_task, tasks,
                kWorkers, rounds, tasks);
    std::fflush(stdout);
    std::fprintf(stderr, "floor            loop        %8.1f ms x %6lld sleeps %8.3f s\n",
                 seconds_per_task * 1e3, sleeps, loop);
    std::fprintf(stderr, "floor-rounds     apply_async %8.1f ms x %6lld rounds %8.3f s\n",
                 seconds_per_task * 1e3, sleeps, rounds);
  }
  return 0;
}
