// Noise-table memory: what a node really spends (PSS, summed over every process of the job) when
// N workers each read an ES noise table, held either once per node (fiber::NodeArray, shared)
// or as a private copy per worker (what a framework without per-node shared data does), against
// the same pool with no table (the baseline). One configuration per run, so that no parked
// workers of an earlier pool are counted:
//
//   ./noise_memory --workers N --table shared|private|none [--floats F]
//
// Prints `table,workers,processes,pss_bytes,table_bytes` on stdout. The job's processes are the
// master, its workers and their children (the task processes).
#include <CLI/CLI.hpp>
#include <fiber/fiber.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace {

// The table a task process reads: one of the two kinds, or neither.
struct Table {
  fiber::NodeArray<float> shared;
  std::vector<float> owned;
  double sum = 0;  // of all values: reading them maps every page

  std::span<const float> view() const {
    return owned.empty() ? shared.view() : std::span<const float>(owned);
  }
};

Table& table() {
  static Table instance;
  return instance;
}

void fill(std::span<float> values) {
  std::mt19937 generator(7);
  std::normal_distribution<float> normal;
  for (float& value : values) value = normal(generator);
}

}  // namespace

// Makes this task process's table (once) and reads all of it, so that every page is mapped.
void load_table(std::string kind, std::int64_t floats) {
  auto& t = table();
  auto size = static_cast<std::size_t>(floats);
  if (kind == "shared" && t.shared.size() != size) {
    t.shared = fiber::NodeArray<float>::open("noise-memory-benchmark", size, fill);
  } else if (kind == "private" && t.owned.size() != size) {
    t.owned.resize(size);
    fill(t.owned);
  }
  auto values = t.view();
  t.sum = std::accumulate(values.begin(), values.end(), 0.0);
}
FIBER_TASK(load_table);

namespace {

// PSS of one process in bytes (smaps_rollup), 0 if it is gone.
double pss_bytes(const std::filesystem::path& process) {
  std::ifstream rollup(process / "smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("Pss:", 0) == 0) return std::stod(line.substr(4)) * 1024;
  }
  return 0;
}

// The parent process id from /proc/PID/stat (0 if the process is gone).
long parent_pid(const std::filesystem::path& process) {
  std::ifstream stat(process / "stat");
  std::string text;
  std::getline(stat, text);
  auto end_of_name = text.rfind(')');  // the name may hold spaces and parentheses
  if (end_of_name == std::string::npos) return 0;
  std::istringstream rest(text.substr(end_of_name + 1));
  char state = 0;
  long parent = 0;
  rest >> state >> parent;
  return parent;
}

// Sums PSS over this job's processes: the master, the pool's workers and their children (the
// task processes). Processes of an earlier run still exiting are not counted.
double job_pss_bytes(const fiber::Pool& pool, int& processes) {
  std::set<long> workers;
  for (const auto& worker : pool.workers()) workers.insert(worker.pid);
  double total = pss_bytes("/proc/self");
  processes = 1;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (workers.count(std::stol(name)) || workers.count(parent_pid(entry.path()))) {
      total += pss_bytes(entry.path());
      ++processes;
    }
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  int workers = 1;
  std::string kind = "shared";
  std::int64_t floats = 25'000'000;
  CLI::App app{"PSS of a job whose workers read a noise table, shared per node or copied",
               "noise_memory"};
  app.add_option("--workers", workers, "pool size")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--table", kind, "shared (fiber::NodeArray), private (a copy per worker), none")
      ->check(CLI::IsMember({"shared", "private", "none"}))
      ->capture_default_str();
  app.add_option("--floats", floats, "float32 entries of the table (25000000: 100 MB)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000}))
      ->capture_default_str();
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  try {
    fiber::Pool pool({.processes = workers});
    pool.broadcast(load_table, kind, floats);  // returns once every worker has it
    int processes = 0;
    double pss = job_pss_bytes(pool, processes);
    double table_bytes = kind == "none" ? 0.0 : static_cast<double>(floats) * sizeof(float);
    std::printf("%s,%d,%d,%.0f,%.0f\n", kind.c_str(), workers, processes, pss, table_bytes);
    std::fprintf(stderr, "noise_memory: table %-7s %2d workers, %2d processes: PSS %8.1f MiB\n",
                 kind.c_str(), workers, processes, pss / 1048576);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "noise_memory: %s\n", error.what());
    return 1;
  }
  return 0;
}
