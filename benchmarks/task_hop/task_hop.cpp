// Where the default pool's per-task time goes in the hop between a worker and its task process:
// empty tasks mapped at chunksize 1 on one worker, with tasks in the worker (Isolation::none) and
// in its task process (Isolation::process, the default). Around the best of --repeats maps, the
// kernel's counters of every process of the job (all threads), per task: CPU time, time waiting
// for a core, times scheduled in (wake-ups and preemptions), voluntary and involuntary context
// switches, read and write system calls (read-type calls that find nothing included); with
// --syscalls, one more map under `perf stat` counts each system call the hop may make. One CSV
// line per (isolation, process, counter) on stdout, the value per task:
//
//   isolation,process,tasks,counter,per_task
//
// process: master, worker, task_process (forked by the worker), orted (Open MPI's daemon), and
// "all" for the wall time (counter wall_us). Counters: wall_us, cpu_us, runqueue_us, timeslices,
// voluntary, involuntary, reads, writes, and syscall:NAME. Beside them, what the kernel's part
// costs on this machine, in this process: rows "floor,self" with counters pipe_write_read_us (a
// small record through a pipe and back) and sched_yield_us. The difference between the two
// isolations is the hop's cost; task_hop.py runs it beside the MPI round trip
// (throughput/mpi_roundtrip) and reports the ratios.
//
// Run it directly (fiber::Runtime sets the MPI defaults): ./task_hop [--help]
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"

// The task: nothing but the round trip of an int.
int empty(int x) { return x; }
FIBER_TASK(empty);

namespace {

// Marks the job's processes: every process started from here inherits it (the spawned workers
// through Open MPI's daemon, the task processes by fork).
constexpr const char* kMark = "FIBER_TASK_HOP_JOB";
constexpr std::size_t kWarmUpTasks = 2000;
constexpr double kNanosecondsPerMicrosecond = 1e3;
// How long perf is given to attach to the job's threads before the map starts.
constexpr auto kPerfAttach = std::chrono::milliseconds(500);
// How long perf stat is given to write its counts and end after its SIGINT, looked at this often.
constexpr auto kPerfStop = std::chrono::seconds(10);
constexpr auto kPerfStopPoll = std::chrono::milliseconds(50);
// The system calls a hop may make: pipe I/O, waiting, yielding, wake-ups.
constexpr const char* kSyscalls[] = {"read",        "write",          "ppoll",      "poll",
                                     "sched_yield", "futex",          "epoll_wait", "epoll_pwait",
                                     "nanosleep",   "clock_nanosleep"};

// System calls timed for the floor rows, and the size of the record sent through the pipe (an
// item record of an empty int task and a run time).
constexpr std::size_t kFloorCalls = 200'000;
constexpr std::size_t kFloorRecordBytes = 40;

struct Options {
  std::size_t tasks = 100'000;
  int repeats = 3;
  bool syscalls = false;
};

// One process's counters, summed over its threads.
struct Counters {
  double cpu_ns = 0, runqueue_ns = 0, timeslices = 0, voluntary = 0, involuntary = 0, reads = 0,
         writes = 0;

  Counters& operator+=(const Counters& other) {
    cpu_ns += other.cpu_ns, runqueue_ns += other.runqueue_ns, timeslices += other.timeslices;
    voluntary += other.voluntary, involuntary += other.involuntary;
    reads += other.reads, writes += other.writes;
    return *this;
  }
  Counters operator-(const Counters& before) const {
    return {cpu_ns - before.cpu_ns,
            runqueue_ns - before.runqueue_ns,
            timeslices - before.timeslices,
            voluntary - before.voluntary,
            involuntary - before.involuntary,
            reads - before.reads,
            writes - before.writes};
  }
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value after "name:" in a /proc "name: value" file, 0 if absent.
double field(const std::string& text, const std::string& name) {
  auto at = text.find("\n" + name + ":");
  if (at == std::string::npos && text.rfind(name + ":", 0) == 0) at = 0;
  if (at == std::string::npos) return 0;
  return std::strtod(text.c_str() + text.find(':', at) + 1, nullptr);
}

Counters read_counters(int pid) {
  Counters counters;
  std::filesystem::path process = "/proc/" + std::to_string(pid);
  std::error_code ignored;
  for (const auto& thread : std::filesystem::directory_iterator(process / "task", ignored)) {
    std::istringstream schedstat(read_text(thread.path() / "schedstat"));
    double cpu = 0, runqueue = 0, slices = 0;
    schedstat >> cpu >> runqueue >> slices;
    std::string status = read_text(thread.path() / "status");
    counters += {cpu,
                 runqueue,
                 slices,
                 field(status, "voluntary_ctxt_switches"),
                 field(status, "nonvoluntary_ctxt_switches"),
                 0,
                 0};
  }
  std::string io = read_text(process / "io");
  counters.reads = field(io, "syscr");
  counters.writes = field(io, "syscw");
  return counters;
}

struct JobProcess {
  int parent = 0;
  std::string name;
};

// The job's processes other than this one, by pid.
std::map<int, JobProcess> job_processes(const std::string& mark) {
  std::map<int, JobProcess> found;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ignored)) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == getpid()) {
      continue;
    }
    std::string environ = read_text(entry.path() / "environ");
    if (environ.find(std::string(kMark) + "=" + mark + '\0') == std::string::npos) continue;
    std::string name = read_text(entry.path() / "comm");
    name.erase(name.find_last_not_of('\n') + 1);
    std::string stat = read_text(entry.path() / "stat");  // pid (comm) state ppid ...
    std::istringstream after_name(stat.substr(stat.rfind(')') + 1));
    char state = 0;
    int parent = 0;
    after_name >> state >> parent;
    found[std::stoi(pid)] = {parent, name};
  }
  return found;
}

// master, orted, worker (a child of orted) or task_process (a child of a worker).
std::string role(int pid, const std::map<int, JobProcess>& job) {
  if (pid == getpid()) return "master";
  const JobProcess& process = job.at(pid);
  if (process.name == "orted") return "orted";
  auto parent = job.find(process.parent);
  bool forked_by_worker = parent != job.end() && parent->second.name != "orted";
  return forked_by_worker ? "task_process" : "worker";
}

std::map<std::string, Counters> counters_by_role(const std::map<int, JobProcess>& job) {
  std::map<std::string, Counters> sums{{"master", read_counters(getpid())}};
  for (const auto& [pid, process] : job) sums[role(pid, job)] += read_counters(pid);
  return sums;
}

void print(const char* isolation, const std::string& process, std::size_t tasks,
           const std::string& counter, double total) {
  std::printf("%s,%s,%zu,%s,%.4f\n", isolation, process.c_str(), tasks, counter.c_str(),
              total / static_cast<double>(tasks));
}

// The role of each thread of the job (this process's included), by thread id.
std::map<int, std::string> thread_roles(const std::map<int, JobProcess>& job) {
  std::map<int, std::string> roles;
  std::vector<int> pids{getpid()};
  for (const auto& [pid, process] : job) pids.push_back(pid);
  for (int pid : pids) {
    std::error_code ignored;
    for (const auto& thread :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ignored)) {
      roles[std::stoi(thread.path().filename().string())] = role(pid, job);
    }
  }
  return roles;
}

// Runs `map` under `perf stat --per-thread` attached to every thread of the job; the counts of
// kSyscalls by role and system call.
template <class Map>
std::map<std::string, std::map<std::string, double>> count_syscalls(
    const std::map<int, JobProcess>& job, Map map) {
  auto roles = thread_roles(job);
  std::string threads, events;
  for (const auto& entry : roles) {
    threads += (threads.empty() ? "" : ",") + std::to_string(entry.first);
  }
  for (const char* name : kSyscalls) {
    events += (events.empty() ? "" : ",") + std::string("syscalls:sys_enter_") + name;
  }
  const std::string output = std::filesystem::temp_directory_path() /
                             ("task_hop_perf_" + std::to_string(getpid()) + ".csv");
  pid_t perf = fork();
  if (perf < 0) throw std::runtime_error("cannot fork perf");
  if (perf == 0) {
    execlp("perf", "perf", "stat", "--per-thread", "-x", ",", "-o", output.c_str(), "-e",
           events.c_str(), "-t", threads.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(kPerfAttach);
  map();
  kill(perf, SIGINT);
  int status = 0;
  // perf stat has been seen to stay after the SIGINT (once in a full bench.sh run): it is given
  // kPerfStop to write its counts, then killed, and the counts are missing rather than the run.
  auto stop_by = std::chrono::steady_clock::now() + kPerfStop;
  while (waitpid(perf, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= stop_by) {
      kill(perf, SIGKILL);
      waitpid(perf, &status, 0);
      std::filesystem::remove(output);
      throw std::runtime_error("perf stat did not stop within " +
                               std::to_string(kPerfStop.count()) + " s of its SIGINT");
    }
    std::this_thread::sleep_for(kPerfStopPoll);
  }
  std::ifstream lines(output);
  std::map<std::string, std::map<std::string, double>> counts;
  const std::string prefix = "syscalls:sys_enter_";
  for (std::string line; std::getline(lines, line);) {
    // comm-tid,count,unit,event,...
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (fields.size() < 4 || fields[3].rfind(prefix, 0) != 0) continue;
    auto dash = fields[0].rfind('-');
    if (dash == std::string::npos) continue;
    auto thread = roles.find(std::atoi(fields[0].c_str() + dash + 1));
    if (thread == roles.end()) continue;
    counts[thread->second][fields[3].substr(prefix.size())] +=
        std::strtod(fields[1].c_str(), nullptr);
  }
  std::filesystem::remove(output);
  // perf stat ends itself with the SIGINT it was stopped by, once it has written its counts.
  bool ended = WIFEXITED(status) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
  if (!ended || counts.empty()) {
    throw std::runtime_error("perf stat counted nothing (is perf installed, and may it trace?)");
  }
  return counts;
}

// What a pipe write and read, and a sched_yield, cost here: the hop's system calls alone.
void measure_floor() {
  int ends[2];
  if (pipe(ends) != 0) throw std::runtime_error("cannot create a pipe");
  char record[kFloorRecordBytes] = {};
  auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kFloorCalls; ++i) {
    if (write(ends[1], record, sizeof record) != sizeof record ||
        read(ends[0], record, sizeof record) != sizeof record) {
      throw std::runtime_error("a pipe write or read failed");
    }
  }
  auto piped = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kFloorCalls; ++i) sched_yield();
  auto yielded = std::chrono::steady_clock::now();
  close(ends[0]);
  close(ends[1]);
  auto microseconds = [](auto span) {
    return std::chrono::duration<double, std::micro>(span).count();
  };
  print("floor", "self", kFloorCalls, "pipe_write_read_us", microseconds(piped - start));
  print("floor", "self", kFloorCalls, "sched_yield_us", microseconds(yielded - piped));
}

void measure(fiber::Isolation isolation, const Options& options, const std::string& mark) {
  fiber::Pool pool({.processes = 1, .isolation = isolation});
  std::vector<int> warm_up(kWarmUpTasks), items(options.tasks);
  std::iota(warm_up.begin(), warm_up.end(), 0);
  std::iota(items.begin(), items.end(), 0);
  auto map = [&](const std::vector<int>& arguments) {
    if (pool.map(empty, arguments, 1) != arguments) {
      throw std::runtime_error("map returned wrong results");
    }
  };
  map(warm_up);
  auto job = job_processes(mark);  // the task process is up after the warm-up

  double best_seconds = 0;
  std::map<std::string, Counters> best;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    auto before = counters_by_role(job);
    auto start = std::chrono::steady_clock::now();
    map(items);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto after = counters_by_role(job);
    if (repeat == 0 || seconds < best_seconds) {
      best_seconds = seconds;
      for (const auto& [name, counters] : after) best[name] = counters - before[name];
    }
  }
  const char* label = isolation == fiber::Isolation::none ? "none" : "process";
  const std::size_t tasks = options.tasks;
  print(label, "all", tasks, "wall_us", best_seconds * 1e6);
  for (const auto& [name, c] : best) {
    print(label, name, tasks, "cpu_us", c.cpu_ns / kNanosecondsPerMicrosecond);
    print(label, name, tasks, "runqueue_us", c.runqueue_ns / kNanosecondsPerMicrosecond);
    print(label, name, tasks, "timeslices", c.timeslices);
    print(label, name, tasks, "voluntary", c.voluntary);
    print(label, name, tasks, "involuntary", c.involuntary);
    print(label, name, tasks, "reads", c.reads);
    print(label, name, tasks, "writes", c.writes);
  }
  if (options.syscalls) {
    for (const auto& [name, counts] : count_syscalls(job, [&] { map(items); })) {
      for (const auto& [call, count] : counts) print(label, name, tasks, "syscall:" + call, count);
    }
  }
  std::fflush(stdout);
  std::fprintf(stderr, "task_hop: isolation %-7s %zu tasks %.3f s, %.2f us/task\n", label, tasks,
               best_seconds, best_seconds * 1e6 / static_cast<double>(tasks));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mark = std::to_string(getpid());
  setenv(kMark, mark.c_str(), /*overwrite=*/0);  // a worker keeps its master's
  fiber::Runtime runtime(argc, argv);
  Options options;
  CLI::App app{"Where the time of the worker <-> task process hop goes (per-task kernel counters)",
               "task_hop"};
  app.add_option("--tasks", options.tasks, "empty tasks per map")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  app.add_option("--repeats", options.repeats, "best of this many maps")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--syscalls", options.syscalls,
               "also count the system calls of one more map with perf stat (needs perf)");
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  try {
    measure_floor();
    for (auto isolation : {fiber::Isolation::none, fiber::Isolation::process}) {
      measure(isolation, options, mark);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "task_hop: %s\n", error.what());
    return 1;
  }
  return 0;
}
