// fiber_startup's probe: where a process's time goes while a pool starts, from inside it.
// startup_probe.cpp defines MPI_Init_thread, MPI_Comm_spawn and MPI_Isend in the program itself
// (MPI's profiling interface: each calls its PMPI_ twin), so that libfiber's calls of them come
// here first. A worker (a process with a parent communicator) writes one record, at its first
// send (its hello to the master), into the records folder; the master keeps its spawns' times.
#pragma once

#include <filesystem>
#include <string>

namespace startup_probe {

// A moment: CLOCK_MONOTONIC (one clock for every process of this machine, so of every simulated
// node) and the process's CPU time (all its threads), in seconds.
struct Mark {
  double wall = 0;
  double cpu = 0;
};

Mark now();

// Where workers write their records (set before fiber::Runtime starts MPI: the workers run the
// master's command line, and so learn it too).
void set_records_folder(const std::filesystem::path& folder);

// The master's MPI_Comm_spawn calls so far.
struct Spawns {
  int calls = 0;
  int processes = 0;
  double wall = 0;  // seconds inside them
  double cpu = 0;   // the master's CPU seconds meanwhile (all its threads)
  Mark first_begin;
};
Spawns spawns();

// The fields of a worker's record, in its order: pid, host, then the wall and CPU seconds of
// its exec (from /proc/self/stat, in ticks), of the program loaded (its static initializers:
// shared libraries mapped), around MPI_Init_thread, and at its hello.
inline constexpr const char* kRecordFields =
    "pid,host,exec_wall,loaded_wall,loaded_cpu,init_begin_wall,init_begin_cpu,init_end_wall,"
    "init_end_cpu,hello_wall,hello_cpu";

}  // namespace startup_probe
