// The paper's mode of the framework overhead test over plain MPI, no framework: the master sends
// each of 5 spawned processes (--workers) the task's duration, each sleeps that long and answers,
// the master waits for all 5 answers, and the next round begins. Same durations and totals as
// fiber_overhead and sleep_floor, same launch defaults as fiber (one spawn per process, as fiber
// spawns its workers), the C API only. What fiber adds to a round is its ratio over this one;
// what is left to this one's ratio over the sleep floor is what MPI processes cost on this
// machine. Best of --repeats after a warm-up; one CSV line per duration on stdout:
//
//   mpi-rounds,apply_async,task_seconds,tasks,workers,seconds,measured_tasks
//
// Run it directly, without mpirun: ./mpi_rounds [--help]
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "plain_mpi.hpp"
#include "protocol_options.hpp"
#include "time_rounds.hpp"

namespace {

// argv[1] of the spawned copies: they must know their role before MPI_Init.
constexpr char kChildFlag[] = "--mpi-rounds-child";
constexpr int kTaskTag = 1, kAnswerTag = 2, kStopTag = 3;

struct Options : fiber_benchmarks::ProtocolOptions {
  int workers = 5;  // the paper's
};

// A task is the round's number and the microseconds to sleep; the answer is the round's number.
int serve_as_child(MPI_Comm parent) {
  for (;;) {
    std::int64_t task[2];
    MPI_Status status;
    MPI_Recv(task, 2, MPI_INT64_T, 0, MPI_ANY_TAG, parent, &status);
    if (status.MPI_TAG == kStopTag) break;
    std::this_thread::sleep_for(std::chrono::microseconds(task[1]));
    MPI_Send(&task[0], 1, MPI_INT64_T, 0, kAnswerTag, parent);
  }
  MPI_Comm_disconnect(&parent);
  MPI_Finalize();
  return 0;
}

// Runs `rounds` rounds of one task per child; the seconds they took.
double run_rounds(const std::vector<MPI_Comm>& children, std::int64_t microseconds,
                  long long rounds) {
  const auto count = children.size();
  std::vector<MPI_Request> requests(2 * count);
  std::vector<std::int64_t> answers(count);
  auto start = std::chrono::steady_clock::now();
  for (long long round = 0; round < rounds; ++round) {
    const std::int64_t task[2] = {round, microseconds};
    for (std::size_t i = 0; i < count; ++i) {
      MPI_Irecv(&answers[i], 1, MPI_INT64_T, 0, kAnswerTag, children[i], &requests[count + i]);
      MPI_Isend(task, 2, MPI_INT64_T, 0, kTaskTag, children[i], &requests[i]);
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (auto answer : answers) {
      if (answer != round) {
        std::fprintf(stderr, "mpi_rounds: a child answered round %lld in round %lld\n",
                     static_cast<long long>(answer), round);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int measure(const Options& options) {
  auto children = fiber_benchmarks::spawn_copies_of_self(kChildFlag, options.workers);
  fiber_benchmarks::time_rounds(options, options.workers, "mpi-rounds",
                                [&](std::int64_t microseconds, long long rounds) {
                                  return run_rounds(children, microseconds, rounds);
                                });
  const std::int64_t stop[2] = {-1, 0};
  for (auto& child : children) {
    MPI_Send(stop, 2, MPI_INT64_T, 0, kStopTag, child);
    MPI_Comm_disconnect(&child);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Comm parent = fiber_benchmarks::start_if_spawned_copy(argc, argv, kChildFlag);
      parent != MPI_COMM_NULL) {
    return serve_as_child(parent);
  }
  Options options;
  CLI::App app{"The paper's rounds of the framework overhead test over plain MPI (no framework)",
               "mpi_rounds"};
  app.add_option("--workers", options.workers, "spawned processes (the paper's 5)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  fiber_benchmarks::add_protocol_options(app, options);
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  fiber_benchmarks::set_fiber_mpi_defaults();  // the children inherit them through the spawn
  MPI_Init(&argc, &argv);
  int status = measure(options);
  MPI_Finalize();
  return status;
}
