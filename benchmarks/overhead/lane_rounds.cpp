// The paper's mode of the framework overhead test over the default pool's processes, no
// framework: each of 5 spawned MPI processes (--workers) forks a task process, as a fiber worker
// does, and the master reaches the task processes directly through memory they share (a memfd
// each MPI process creates and the master opens through /proc/<pid>/fd), one mailbox each way.
// The MPI processes stay off the round's path: they nap between looks for the master's stop.
// A task process polls its mailbox with sched_yield (as an MPI process waiting in MPI_Recv does
// under yield_when_idle) for kTaskPoll after each answer, then sleeps on a futex; the master
// polls as MPI's MPI_Waitall does. This is the floor of a lane from the master to each task
// process on its host (docs/design.md, "Where a task's time goes"): what the default pool's
// rounds could cost with the worker off their path, beside mpi_rounds' plain MPI processes.
// Best of --repeats after a warm-up; one CSV line per duration on stdout:
//
//   lane-rounds,apply_async,task_seconds,tasks,workers,seconds,measured_tasks
//
// Run it directly, without mpirun: ./lane_rounds [--help]
#include <fcntl.h>
#include <linux/futex.h>
#include <mpi.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "plain_mpi.hpp"
#include "protocol_options.hpp"
#include "time_rounds.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// argv[1] of the spawned copies: they must know their role before MPI_Init.
constexpr char kChildFlag[] = "--lane-rounds-child";
constexpr int kWhereTag = 1, kStopTag = 3;
// How long a task process polls for the next task before it sleeps: longer than a round's gap
// between its answer and its next task, so that the rounds run on polling, as plain MPI's do.
constexpr auto kTaskPoll = 1ms;
// Pauses of the CPU's spin hint before a poller starts yielding.
constexpr int kSpinsBeforeYield = 64;
// How often an MPI process looks for the master's stop (fiber's idle worker polls as often).
constexpr auto kWorkerNap = 1ms;
// The task that tells a task process to exit.
constexpr std::int64_t kStopTask = -1;

struct Options : fiber_benchmarks::ProtocolOptions {
  int workers = 5;  // the paper's
};

// One direction: the writer stores a value and counts it; a reader that went to sleep said so.
struct Mailbox {
  alignas(64) std::atomic<std::uint64_t> posted{0};
  std::atomic<std::int64_t> value{0};
  alignas(64) std::atomic<std::uint32_t> reader_asleep{0};
};

// The shared page: tasks (microseconds to sleep) down, answers (the round's number) up.
struct Lane {
  Mailbox down;
  Mailbox up;
};

[[noreturn]] void die(const std::string& what) {
  std::perror(("lane_rounds: " + what).c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

void post(Mailbox& box, std::int64_t value) {
  box.value.store(value, std::memory_order_relaxed);
  box.posted.fetch_add(1, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the reader's before it sleeps
  // The waker clears the word: a reader between its last look and its FUTEX_WAIT then finds it
  // changed and does not sleep (with the word left set, that wake-up was lost and it slept on).
  if (box.reader_asleep.load(std::memory_order_relaxed) && box.reader_asleep.exchange(0)) {
    syscall(SYS_futex, &box.reader_asleep, FUTEX_WAKE, 1, nullptr, nullptr, 0);
  }
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The next value after the `taken` ones: spins, yields for `poll` (forever if it is negative),
// then sleeps until it is posted.
std::int64_t take(Mailbox& box, std::uint64_t& taken, Clock::duration poll) {
  auto arrived = [&] { return box.posted.load(std::memory_order_acquire) > taken; };
  const auto start = Clock::now();
  for (int spins = 0; !arrived();) {
    if (spins < kSpinsBeforeYield) {
      ++spins;
      cpu_relax();
    } else if (poll < Clock::duration::zero() || Clock::now() - start < poll) {
      sched_yield();
    } else {
      box.reader_asleep.store(1);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (!arrived()) syscall(SYS_futex, &box.reader_asleep, FUTEX_WAIT, 1, nullptr, nullptr, 0);
      box.reader_asleep.store(0);
    }
  }
  ++taken;
  return box.value.load(std::memory_order_relaxed);
}

[[noreturn]] void serve_as_task_process(Lane& lane) {
  std::uint64_t taken = 0;
  for (std::int64_t round = 0;; ++round) {
    std::int64_t microseconds = take(lane.down, taken, kTaskPoll);
    if (microseconds == kStopTask) std::_Exit(0);
    std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
    post(lane.up, round);
  }
}

// The spawned MPI process: makes the lane, forks its task process, tells the master where the
// lane is, and naps until the master says stop.
int serve_as_child(MPI_Comm parent) {
  int fd = memfd_create("lane-rounds", 0);
  if (fd < 0 || ftruncate(fd, sizeof(Lane)) != 0) die("memfd");
  void* memory = mmap(nullptr, sizeof(Lane), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) die("mmap");
  auto* lane = new (memory) Lane;
  pid_t task_process = fork();
  if (task_process < 0) die("fork");
  if (task_process == 0) serve_as_task_process(*lane);
  const std::int64_t where[2] = {getpid(), fd};
  MPI_Send(where, 2, MPI_INT64_T, 0, kWhereTag, parent);
  for (int stop = 0; !stop;) {
    std::this_thread::sleep_for(kWorkerNap);
    MPI_Iprobe(0, kStopTag, parent, &stop, MPI_STATUS_IGNORE);
  }
  MPI_Recv(nullptr, 0, MPI_INT64_T, 0, kStopTag, parent, MPI_STATUS_IGNORE);
  post(lane->down, kStopTask);
  waitpid(task_process, nullptr, 0);
  MPI_Comm_disconnect(&parent);
  MPI_Finalize();
  return 0;
}

// The master's end of each child's lane.
struct LaneEnd {
  Lane* lane;
  std::uint64_t answers_taken = 0;
  std::int64_t rounds_sent = 0;
};

LaneEnd open_lane(MPI_Comm child) {
  std::int64_t where[2];
  MPI_Recv(where, 2, MPI_INT64_T, 0, kWhereTag, child, MPI_STATUS_IGNORE);
  std::string path = "/proc/" + std::to_string(where[0]) + "/fd/" + std::to_string(where[1]);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) die("open " + path);
  void* memory = mmap(nullptr, sizeof(Lane), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) die("mmap " + path);
  close(fd);
  return {static_cast<Lane*>(memory)};
}

// Runs `rounds` rounds of one task per task process; the seconds they took.
double run_rounds(std::vector<LaneEnd>& lanes, std::int64_t microseconds, long long rounds) {
  auto start = Clock::now();
  for (long long round = 0; round < rounds; ++round) {
    for (auto& end : lanes) post(end.lane->down, microseconds);
    for (auto& end : lanes) {
      std::int64_t answer = take(end.lane->up, end.answers_taken, Clock::duration(-1));
      if (answer != end.rounds_sent++) {
        std::fprintf(stderr, "lane_rounds: a task process answered round %lld out of turn\n",
                     static_cast<long long>(answer));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int measure(const Options& options) {
  auto children = fiber_benchmarks::spawn_copies_of_self(kChildFlag, options.workers);
  std::vector<LaneEnd> lanes;
  lanes.reserve(children.size());
  for (MPI_Comm child : children) lanes.push_back(open_lane(child));
  fiber_benchmarks::time_rounds(options, options.workers, "lane-rounds",
                                [&](std::int64_t microseconds, long long rounds) {
                                  return run_rounds(lanes, microseconds, rounds);
                                });
  for (auto& child : children) {
    MPI_Send(nullptr, 0, MPI_INT64_T, 0, kStopTag, child);
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
  CLI::App app{
      "The paper's rounds of the framework overhead test over task processes that the master "
      "reaches through shared memory (no framework)",
      "lane_rounds"};
  app.add_option("--workers", options.workers, "spawned processes, each with a task process")
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
