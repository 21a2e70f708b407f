// What workers cost when they have nothing to do (docs/design.md, "Idle workers sleep"): N
// workers held by a pool between calls, the same N parked (no pool), and N whose task is running
// (a long sleep in the task process: the worker process only watches it). For each, over a
// window of --seconds once they settled: the machine's busy share (from /proc/stat: every CPU's
// time but idle and iowait, so the master, mpirun and the nodes' daemons count too), each worker
// process's CPU (utime + stime of all its threads, from /proc/PID/stat) and its wake-ups
// (context switches of all its threads, from /proc/PID/task/*/status). Then how long the first
// call after the idle spell takes (one empty task per worker) against the same call at once
// after it: the price of waking sleepers.
//
//   mpirun -n 1 ./idle_workers --workers 16 64 128 [--seconds 10]
//   (on simulated nodes: benchmarks/idle_workers/idle_workers.py runs it)
//
// Prints CSV lines `nodes,workers,where,state,measure,value` on stdout (where: machine,
// master_host, other_hosts, all), readable lines on stderr.
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"

int nothing(int x) { return x; }
FIBER_TASK(nothing);

int sleep_seconds(int seconds) {
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  return seconds;
}
FIBER_TASK(sleep_seconds);

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Past a worker's spin after its last message and its first naps before a window starts.
constexpr auto kSettle = 3s;

// The machine's CPU time as jiffies: busy (all but idle and iowait) and in all.
struct MachineTime {
  long long busy = 0;
  long long total = 0;
};

MachineTime machine_time() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;  // "cpu": the sum over CPUs
  MachineTime time;
  long long value = 0;
  for (int field = 0; field < 8 && stat >> value; ++field) {
    time.total += value;
    if (field != 3 && field != 4) time.busy += value;  // idle, iowait
  }
  return time;
}

long long ticks_of(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return 0;
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  long long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stoll(field);  // utime, stime
  }
  return ticks;
}

long long switches_of(long pid) {
  long long total = 0;
  std::error_code error;
  for (const auto& thread :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream status(thread.path() / "status");
    for (std::string line; std::getline(status, line);) {
      for (const char* key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
        if (line.rfind(key, 0) == 0) total += std::stoll(line.substr(std::string(key).size()));
      }
    }
  }
  return total;
}

// The workers on the master's host (which lend their task processes to it: docs/design.md, "The
// lane") and the others, measured apart.
struct Workers {
  std::vector<long> master_host;
  std::vector<long> other_hosts;
  int nodes = 0;
  int count() const { return static_cast<int>(master_host.size() + other_hosts.size()); }
};

struct Counts {
  long long ticks = 0;
  long long switches = 0;
};

Counts counts_of(const std::vector<long>& pids) {
  Counts counts;
  for (long pid : pids) {
    counts.ticks += ticks_of(pid);
    counts.switches += switches_of(pid);
  }
  return counts;
}

void row(const Workers& workers, const char* where, const char* state, const char* measure,
         double value) {
  std::printf("%d,%d,%s,%s,%s,%.6f\n", workers.nodes, workers.count(), where, state, measure,
              value);
  std::fflush(stdout);
}

// One window of `length`: the machine's busy share, and per worker of each group its CPU and
// wake-ups.
void measure(const Workers& workers, const char* state, std::chrono::seconds length) {
  auto machine_before = machine_time();
  Counts local_before = counts_of(workers.master_host);
  Counts remote_before = counts_of(workers.other_hosts);
  std::this_thread::sleep_for(length);
  auto machine_after = machine_time();
  Counts local = counts_of(workers.master_host);
  Counts remote = counts_of(workers.other_hosts);
  const double seconds = static_cast<double>(length.count());
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  const double busy = static_cast<double>(machine_after.busy - machine_before.busy) /
                      static_cast<double>(machine_after.total - machine_before.total);
  row(workers, "machine", state, "busy_share", busy);
  std::fprintf(stderr, "%4d workers on %d node(s), %-8s machine %5.1f %% busy\n", workers.count(),
               workers.nodes, state, 100.0 * busy);
  auto group = [&](const char* where, std::size_t count, Counts before, Counts after) {
    if (count == 0) return;
    const double n = static_cast<double>(count);
    const double cpu = 100.0 * static_cast<double>(after.ticks - before.ticks) * tick / seconds / n;
    const double wakeups = static_cast<double>(after.switches - before.switches) / seconds / n;
    row(workers, where, state, "cpu_percent_per_worker", cpu);
    row(workers, where, state, "wakeups_per_worker_per_second", wakeups);
    std::fprintf(stderr, "     %3zu on %-12s %.4f %% of a core, %7.2f wake-ups/s per worker\n",
                 count, where, cpu, wakeups);
  };
  group("master_host", workers.master_host.size(), local_before, local);
  group("other_hosts", workers.other_hosts.size(), remote_before, remote);
}

Workers workers_of(const fiber::Pool& pool) {
  Workers workers;
  std::set<std::string> hosts;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  for (const auto& worker : pool.workers()) {
    hosts.insert(worker.host);
    (worker.host == name ? workers.master_host : workers.other_hosts).push_back(worker.pid);
  }
  workers.nodes = static_cast<int>(hosts.size());
  return workers;
}

double seconds_of(fiber::Pool& pool, int workers) {
  auto start = Clock::now();
  pool.map(nothing, std::vector<int>(static_cast<std::size_t>(workers)), 1);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run(int count, std::chrono::seconds length) {
  Workers workers;
  {
    auto start = Clock::now();
    fiber::Pool pool({.processes = count});
    std::fprintf(stderr, "%d workers started in %.1f s\n", count,
                 std::chrono::duration<double>(Clock::now() - start).count());
    seconds_of(pool, count);
    workers = workers_of(pool);
    std::this_thread::sleep_for(kSettle);
    measure(workers, "held", length);
    // Waking them: the first call after the idle spell, then the same call again at once.
    const double first = seconds_of(pool, count);
    const double again = seconds_of(pool, count);
    row(workers, "all", "held", "first_call_after_idle_ms", first * 1e3);
    row(workers, "all", "held", "call_while_awake_ms", again * 1e3);
    std::fprintf(stderr,
                 "%4d workers: a call of one task each %.2f ms after the idle spell, %.2f ms at "
                 "once after\n",
                 count, first * 1e3, again * 1e3);
    // Running: each worker's task process sleeps through the window; the worker watches it.
    const int task_seconds = static_cast<int>((kSettle + length).count()) + 1;
    auto running = pool.map_async(
        sleep_seconds, std::vector<int>(static_cast<std::size_t>(count), task_seconds), 1);
    std::this_thread::sleep_for(kSettle);
    measure(workers, "running", length);
    running.get();
  }
  std::this_thread::sleep_for(kSettle);
  measure(workers, "parked", length);
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  CLI::App app("The CPU and wake-ups of idle workers: held, running a task, parked",
               "idle_workers");
  std::vector<int> workers{16};
  int seconds = 10;
  app.add_option("--workers", workers,
                 "pool sizes, one run each (largest last: parked workers are reused)");
  app.add_option("--seconds", seconds, "length of each measured window");
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  for (int count : workers) run(count, std::chrono::seconds(seconds));
  return 0;
}
