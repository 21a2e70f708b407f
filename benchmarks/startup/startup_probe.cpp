#include "startup_probe.hpp"

#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace startup_probe {
namespace {

double seconds_of(clockid_t clock) {
  timespec time{};
  clock_gettime(clock, &time);
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_nsec) * 1e-9;
}

// When the kernel started this process (exec), on CLOCK_MONOTONIC: /proc/self/stat's start time
// counts ticks since boot (CLOCK_BOOTTIME), which runs ahead of CLOCK_MONOTONIC by the time
// spent suspended.
double exec_wall() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fields = text.substr(text.rfind(')') + 2);
  constexpr int kStartTimeField = 19;  // after "pid (comm)": field 22 of proc(5)
  std::size_t at = 0;
  for (int field = 0; field < kStartTimeField; ++field) at = fields.find(' ', at) + 1;
  const double ticks = std::stod(fields.substr(at, fields.find(' ', at) - at));
  const double suspended = seconds_of(CLOCK_BOOTTIME) - seconds_of(CLOCK_MONOTONIC);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK)) - suspended;
}

const Mark loaded = now();  // this file's static initializer: the program is loaded
Mark init_begin, init_end;
bool is_worker = false;
bool hello_written = false;
std::filesystem::path records;
Spawns spawned;

void write_record(const Mark& hello) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::filesystem::path partial = records / (std::to_string(getpid()) + ".partial");
  {
    std::ofstream out(partial);
    out.precision(17);
    out << getpid() << ',' << host << ',' << exec_wall() << ',' << loaded.wall << ',' << loaded.cpu
        << ',' << init_begin.wall << ',' << init_begin.cpu << ',' << init_end.wall << ','
        << init_end.cpu << ',' << hello.wall << ',' << hello.cpu << '\n';
  }
  std::filesystem::rename(partial, records / (std::to_string(getpid()) + ".csv"));
}

}  // namespace

Mark now() { return {seconds_of(CLOCK_MONOTONIC), seconds_of(CLOCK_PROCESS_CPUTIME_ID)}; }

void set_records_folder(const std::filesystem::path& folder) { records = folder; }

Spawns spawns() { return spawned; }

}  // namespace startup_probe

using startup_probe::now;

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  startup_probe::init_begin = now();
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  startup_probe::init_end = now();
  MPI_Comm parent = MPI_COMM_NULL;
  if (rc == MPI_SUCCESS) PMPI_Comm_get_parent(&parent);
  startup_probe::is_worker = parent != MPI_COMM_NULL;
  return rc;
}

extern "C" int MPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info,
                              int root, MPI_Comm comm, MPI_Comm* intercomm, int errcodes[]) {
  auto begin = now();
  int rc = PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes);
  auto end = now();
  auto& spawned = startup_probe::spawned;
  if (spawned.calls++ == 0) spawned.first_begin = begin;
  spawned.processes += maxprocs;
  spawned.wall += end.wall - begin.wall;
  spawned.cpu += end.cpu - begin.cpu;
  return rc;
}

extern "C" int MPI_Isend(const void* buffer, int count, MPI_Datatype type, int peer, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  if (startup_probe::is_worker && !startup_probe::hello_written &&
      !startup_probe::records.empty()) {
    auto hello = now();
    startup_probe::hello_written = true;
    int rc = PMPI_Isend(buffer, count, type, peer, tag, comm, request);
    startup_probe::write_record(hello);
    return rc;
  }
  return PMPI_Isend(buffer, count, type, peer, tag, comm, request);
}
