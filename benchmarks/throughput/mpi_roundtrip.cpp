// The floor under fiber's per-task cost: one spawned copy of this program answers 8-byte
// messages, over plain MPI (C API) with the launch defaults fiber sets, so the only difference
// from a fiber task is fiber itself. Prints the best of 3 runs of N round trips (default 20000),
//
//   mpi,roundtrip,1,1,<N>,<seconds>,<round trips per second>
//
// on stdout and the microseconds per round trip on stderr. Run it directly, without mpirun:
//
//   ./mpi_roundtrip [--round-trips N]
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "command_line.hpp"
#include "plain_mpi.hpp"

namespace {

// argv[1] of the spawned copy: it must know its role before MPI_Init, when MPI cannot tell it.
constexpr char kChildFlag[] = "--mpi-roundtrip-child";
constexpr int kPingTag = 1, kPongTag = 2, kStopTag = 3;
constexpr int kRepeats = 3;
constexpr long kWarmUpRoundTrips = 1000;

int serve_as_child(MPI_Comm parent) {
  std::uint64_t value = 0;
  for (;;) {
    MPI_Status status;
    MPI_Recv(&value, 1, MPI_UINT64_T, 0, MPI_ANY_TAG, parent, &status);
    if (status.MPI_TAG == kStopTag) break;
    MPI_Send(&value, 1, MPI_UINT64_T, 0, kPongTag, parent);
  }
  MPI_Comm_disconnect(&parent);
  MPI_Finalize();
  return 0;
}

double time_round_trips(MPI_Comm child, long count) {
  std::uint64_t value = 0;
  double start = MPI_Wtime();
  for (long i = 0; i < count; ++i) {
    MPI_Send(&value, 1, MPI_UINT64_T, 0, kPingTag, child);
    MPI_Recv(&value, 1, MPI_UINT64_T, 0, kPongTag, child, MPI_STATUS_IGNORE);
    ++value;
  }
  double seconds = MPI_Wtime() - start;
  if (value != static_cast<std::uint64_t>(count)) {
    std::fprintf(stderr, "mpi_roundtrip: the child answered a wrong value\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Comm parent = fiber_benchmarks::start_if_spawned_copy(argc, argv, kChildFlag);
      parent != MPI_COMM_NULL) {
    return serve_as_child(parent);
  }
  long round_trips = 20000;
  CLI::App app{"The MPI round trip to a spawned process: the floor under fiber's per-task cost",
               "mpi_roundtrip"};
  app.add_option("--round-trips", round_trips, "round trips per measurement")
      ->check(CLI::Range(1L, 100'000'000L))
      ->capture_default_str();
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  fiber_benchmarks::set_fiber_mpi_defaults();  // the child inherits them through the spawn
  MPI_Init(&argc, &argv);

  MPI_Comm child = fiber_benchmarks::spawn_copies_of_self(kChildFlag, 1).front();

  time_round_trips(child, kWarmUpRoundTrips);
  double best = time_round_trips(child, round_trips);
  for (int i = 1; i < kRepeats; ++i) best = std::min(best, time_round_trips(child, round_trips));

  std::printf("mpi,roundtrip,1,1,%ld,%.6f,%.1f\n", round_trips, best,
              static_cast<double>(round_trips) / best);
  std::fflush(stdout);
  std::fprintf(stderr, "mpi_roundtrip: %.2f us per round trip (best of %d x %ld, spawned child)\n",
               best / static_cast<double>(round_trips) * 1e6, kRepeats, round_trips);

  std::uint64_t stop = 0;
  MPI_Send(&stop, 1, MPI_UINT64_T, 0, kStopTag, child);
  MPI_Comm_disconnect(&child);
  MPI_Finalize();
  return 0;
}
