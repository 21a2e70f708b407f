// Where a pool's start-up goes, per worker (docs/guide/benchmarks.md, "Start-up"): one pool of
// --workers workers started by one master, the master's and every worker's moments taken by the
// probe (startup_probe.hpp), then the first call (each worker forks its task process) and the
// same call again.
//
//   mpirun -n 1 ./fiber_startup --workers 128 --records DIR
//   (on simulated nodes: benchmarks/startup/startup.py runs it and adds the launchers' CPU)
//
// Prints on stdout, each followed by a pause of --pause seconds so that the driver can read the
// job's CPU from /proc at that moment: "phase started" (the runtime is up, no worker yet),
// "phase ready" (the pool is built: every worker said hello and was welcomed), "phase
// first_call" and "phase second_call" (a call of one empty task per worker, chunksize 1). Then
// "master,NAME,VALUE" lines and one "worker,RECORD" line per worker (startup_probe.hpp's fields).
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "startup_probe.hpp"

int nothing(int x) { return x; }
FIBER_TASK(nothing);

namespace {

using namespace std::chrono_literals;

constexpr const char* kRecordsFlag = "--records";
// How long the workers' records may take to appear after the pool is ready: each is written at
// its hello, so before the pool is ready; the file system may show it a moment late.
constexpr auto kRecordsWait = 30s;

// The records folder from the command line, before the runtime starts (a worker's probe writes
// there inside MPI's start; CLI11 reads the flag again afterwards).
std::filesystem::path records_folder(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], kRecordsFlag) == 0) return argv[i + 1];
  }
  return {};
}

void phase(const char* name, double pause) {
  std::printf("phase %s\n", name);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::duration<double>(pause));
}

void master_value(const char* name, double value) { std::printf("master,%s,%.9f\n", name, value); }

double call_seconds(fiber::Pool& pool, int workers) {
  auto begin = startup_probe::now();
  pool.map(nothing, std::vector<int>(static_cast<std::size_t>(workers)), 1);
  return startup_probe::now().wall - begin.wall;
}

// Every worker's record line, once all `workers` are there.
std::vector<std::string> read_records(const std::filesystem::path& folder, int workers) {
  auto deadline = std::chrono::steady_clock::now() + kRecordsWait;
  for (;;) {
    std::vector<std::string> lines;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (entry.path().extension() != ".csv") continue;
      std::ifstream in(entry.path());
      std::string line;
      if (std::getline(in, line)) lines.push_back(line);
    }
    if (static_cast<int>(lines.size()) >= workers || std::chrono::steady_clock::now() > deadline) {
      return lines;
    }
    std::this_thread::sleep_for(100ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto folder = records_folder(argc, argv);
  startup_probe::set_records_folder(folder);
  auto before_runtime = startup_probe::now();
  fiber::Runtime runtime(argc, argv);
  auto runtime_up = startup_probe::now();
  CLI::App app("Where a pool's start-up goes, per worker", "fiber_startup");
  int workers = 16;
  double pause = 2;
  std::string records;
  app.add_option("--workers", workers, "the pool's size")->check(CLI::PositiveNumber);
  app.add_option(kRecordsFlag, records, "an empty folder for the workers' records")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--pause", pause, "seconds after each phase line (the driver reads /proc)")
      ->check(CLI::NonNegativeNumber);
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;

  phase("started", pause);
  auto pool_begin = startup_probe::now();
  fiber::Pool pool({.processes = workers});
  auto pool_end = startup_probe::now();
  phase("ready", pause);
  const double first = call_seconds(pool, workers);
  phase("first_call", pause);
  const double second = call_seconds(pool, workers);
  phase("second_call", pause);

  auto spawns = startup_probe::spawns();
  master_value("runtime_seconds", runtime_up.wall - before_runtime.wall);
  master_value("runtime_cpu", runtime_up.cpu - before_runtime.cpu);
  master_value("pool_begin_wall", pool_begin.wall);
  master_value("pool_seconds", pool_end.wall - pool_begin.wall);
  master_value("pool_cpu", pool_end.cpu - pool_begin.cpu);
  master_value("spawn_calls", spawns.calls);
  master_value("spawned_processes", spawns.processes);
  master_value("spawn_begin_wall", spawns.first_begin.wall);
  master_value("spawn_seconds", spawns.wall);
  master_value("spawn_cpu", spawns.cpu);
  master_value("first_call_seconds", first);
  master_value("second_call_seconds", second);
  auto lines = read_records(folder, workers);
  for (const auto& line : lines) std::printf("worker,%s\n", line.c_str());
  std::fflush(stdout);
  if (static_cast<int>(lines.size()) != workers) {
    std::fprintf(stderr, "fiber_startup: %zu of %d workers wrote a record\n", lines.size(),
                 workers);
    return 1;
  }
  return 0;
}
