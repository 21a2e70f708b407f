// What workers cost when they have nothing to do (docs/design.md, "Idle workers sleep"): N
// workers held by a pool between calls, the same N parked (no pool), and N whose task is running
// (a long sleep in the task process: the worker process only watches it). For each, over a
// window of --seconds once they settled: the machine's busy share (from /proc/stat: every CPU's
// time but idle and iowait, so the master, mpirun and the nodes' daemons count too) and the
// workers' own share of it, each worker's CPU (utime + stime of all the threads of the worker
// process and of its task process, from /proc/PID/stat) and its wake-ups (context switches of
// all those threads, from /proc/PID/task/*/status). Then how long the first
// call after an idle spell takes (one empty task per worker) against the same call at once
// after it (medians of 5 spells): the price of waking sleepers.
//
//   mpirun -n 1 ./idle_workers --workers 16 64 128 [--seconds 10]
//   (on simulated nodes: benchmarks/idle_workers/idle_workers.py runs it)
//
// Prints CSV lines `nodes,workers,where,state,measure,value` on stdout (where: machine, master,
// master_host, other_hosts, all), readable lines on stderr.
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ios>
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
// Idle spells after which the first call is timed.
constexpr int kWakeSpells = 5;

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
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(stat), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    return 0;  // it ended between the open and the read (ESRCH; fiberrun/process_tree.cpp)
  }
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

// A worker's task process (its child), if it has one.
std::vector<long> children_of(long pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<long> children;
  for (long child; file >> child;) children.push_back(child);
  return children;
}

// The processes counted for these workers: each worker and its task process (whatever runs
// while the worker is idle costs the same whichever of the two runs it).
std::vector<long> with_children(const std::vector<long>& workers) {
  std::vector<long> pids = workers;
  for (long pid : workers) {
    for (long child : children_of(pid)) pids.push_back(child);
  }
  return pids;
}

// Per process, so that one gone by the window's end (a task process that ended) is left out.
std::vector<Counts> counts_of(const std::vector<long>& pids) {
  std::vector<Counts> counts;
  for (long pid : pids) counts.push_back({ticks_of(pid), switches_of(pid)});
  return counts;
}

Counts difference(const std::vector<Counts>& before, const std::vector<Counts>& after) {
  Counts total;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (after[i].ticks == 0 && after[i].switches == 0) continue;  // gone
    total.ticks += after[i].ticks - before[i].ticks;
    total.switches += after[i].switches - before[i].switches;
  }
  return total;
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
  const auto local_pids = with_children(workers.master_host);
  const auto remote_pids = with_children(workers.other_hosts);
  auto machine_before = machine_time();
  const long long master_before = ticks_of(getpid());
  const auto local_before = counts_of(local_pids);
  const auto remote_before = counts_of(remote_pids);
  std::this_thread::sleep_for(length);
  auto machine_after = machine_time();
  const long long master_ticks = ticks_of(getpid()) - master_before;
  const Counts local = difference(local_before, counts_of(local_pids));
  const Counts remote = difference(remote_before, counts_of(remote_pids));
  const double seconds = static_cast<double>(length.count());
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  const double busy = static_cast<double>(machine_after.busy - machine_before.busy) /
                      static_cast<double>(machine_after.total - machine_before.total);
  // The workers' own share of the machine's CPUs: what they add to its busy share, which on a
  // machine shared with other jobs says more than that share.
  const double cpus = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  const double workers_busy =
      static_cast<double>(local.ticks + remote.ticks) * tick / seconds / cpus;
  row(workers, "machine", state, "busy_share", busy);
  // The master (this process), which sleeps too while no work is in flight.
  const double master_cpu = 100.0 * static_cast<double>(master_ticks) * tick / seconds;
  row(workers, "machine", state, "workers_busy_share", workers_busy);
  row(workers, "master", state, "cpu_percent", master_cpu);
  std::fprintf(stderr,
               "%4d workers on %d node(s), %-8s machine %5.1f %% busy, %.2f %% by them, the "
               "master %.2f %% of a core\n",
               workers.count(), workers.nodes, state, 100.0 * busy, 100.0 * workers_busy,
               master_cpu);
  auto group = [&](const char* where, std::size_t count, const Counts& counted) {
    if (count == 0) return;
    const double n = static_cast<double>(count);
    const double cpu = 100.0 * static_cast<double>(counted.ticks) * tick / seconds / n;
    const double wakeups = static_cast<double>(counted.switches) / seconds / n;
    row(workers, where, state, "cpu_percent_per_worker", cpu);
    row(workers, where, state, "wakeups_per_worker_per_second", wakeups);
    std::fprintf(stderr, "     %3zu on %-12s %.4f %% of a core, %7.2f wake-ups/s per worker\n",
                 count, where, cpu, wakeups);
  };
  group("master_host", workers.master_host.size(), local);
  group("other_hosts", workers.other_hosts.size(), remote);
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

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
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
    // Waking them: the first call after an idle spell, then the same call again at once; the
    // median of kWakeSpells spells (the first after the window, then spells of kSettle).
    std::vector<double> first, again;
    for (int spell = 0; spell < kWakeSpells; ++spell) {
      if (spell > 0) std::this_thread::sleep_for(kSettle);
      first.push_back(seconds_of(pool, count));
      again.push_back(seconds_of(pool, count));
    }
    row(workers, "all", "held", "first_call_after_idle_ms", median(first) * 1e3);
    row(workers, "all", "held", "call_while_awake_ms", median(again) * 1e3);
    std::fprintf(stderr,
                 "%4d workers: a call of one task each %.2f ms after an idle spell, %.2f ms at "
                 "once after (medians of %d)\n",
                 count, median(first) * 1e3, median(again) * 1e3, kWakeSpells);
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
