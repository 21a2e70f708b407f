#include "worker/task_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "fiber/detail/task_process_start.hpp"
#include "fiber/errors.hpp"
#include "posix/timespec.hpp"
#include "trace/hop_trace.hpp"
#include "wire/exit_status.hpp"
#include "worker/item_runner.hpp"

namespace fiber::detail {
namespace {

// set_task_process_start's function.
void (*task_process_start)() = nullptr;

using namespace std::chrono_literals;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records are written in batches: a write per item would cost more than a small task. A flush
// fits in the up ring.
constexpr std::size_t kFlushBytes = kTaskRingBytes;
constexpr std::int64_t kFlushNanoseconds = 2'000'000;
// The child's status when its chunk ring was closed mid-frame.
constexpr int kCutShortExit = 1;
// How long the worker sleeps, waiting for room to send, between looks at whether the child lives.
constexpr auto kRoomWait = 200us;
// How long a task process whose memory is lent to the master looks for the next chunk before it
// sleeps: as long as a short task, so that the master's next chunk finds it awake. The master
// writes the chunks of a round one after another, and a sleeper took ~30 us to wake on a
// 2-vCPU machine: 100 us rounds went from 1.15x plain MPI's to 1.08x (docs/design.md, "The
// lane"). It yields between looks, and a worker's own task process keeps Ring::kSpin: there the
// worker needs the core to pass the chunk on.
constexpr auto kLentSpin = 1ms;
// A shaped pool's memory limit (fiber::WorkerShape::memory_bytes) is the task process's
// RLIMIT_DATA: its heap and private writable mappings, where malloc's large blocks go, and not
// the address space that Open MPI, UCX and their libraries reserve without using it
// (RLIMIT_AS), which the worker's fork inherits (docs/platform.md, "A task process's memory
// limit"). cgroups would limit its resident memory instead, but need a delegated hierarchy.
constexpr int kMemoryLimit = RLIMIT_DATA;
// How a task process ends when an allocation of its task fails at the limit (its new_handler):
// the worker then names the limit. A task that calls exit with this status under a limit is
// reported the same way.
constexpr int kOverMemoryLimitExit = 251;
// How long a stopped task process may take to write its hop marks (trace/hop_trace.hpp).
constexpr auto kTraceWriteWait = 1000ms;

// A C++ allocation failed at the task process's memory limit: the process ends alone, and its
// worker reports the limit (TaskProcess::reap). Writes with write(2): nothing may allocate here.
[[noreturn]] void over_memory_limit() {
  constexpr std::string_view kSaid = "fiber: a task process went over its memory limit\n";
  [[maybe_unused]] auto written = write(STDERR_FILENO, kSaid.data(), kSaid.size());
  _exit(kOverMemoryLimitExit);
}

// The child: reads chunks, runs their items, writes their records. Never returns.
[[noreturn]] void serve_chunks(task_ring::Ring& in, task_ring::Ring& out, TaskProgress& progress,
                               std::uint64_t memory_limit) {
  // Open MPI's handlers print its own crash report; a task's crash is ours to report. And the
  // child must not outlive its worker.
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGPIPE}) {
    ::signal(signal, SIG_DFL);
  }
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(0);
  // A group of its own (also set by the worker, whichever runs first): a task's kill(0, ...)
  // ends this process and those it started, not its worker; the worker ends them all together.
  setpgid(0, 0);
  hop_trace::forget_inherited();
  if (memory_limit > 0) {
    rlimit limit{memory_limit, memory_limit};
    if (setrlimit(kMemoryLimit, &limit) != 0) {
      std::fprintf(stderr, "fiber: cannot limit a task process's memory to %llu bytes: %s\n",
                   static_cast<unsigned long long>(memory_limit), std::strerror(errno));
    }
    std::set_new_handler(&over_memory_limit);
  }
  if (task_process_start) task_process_start();

  ItemRunner runner;
  task_frames::ChunkReader chunks(in);
  Bytes records;
  for (;;) {
    std::optional<std::span<const char>> body;
    try {
      body = chunks.next(progress.lent.load(std::memory_order_relaxed) ? kLentSpin
                                                                       : task_ring::Ring::kSpin);
    } catch (const task_frames::FrameError& error) {
      std::fprintf(stderr, "%s\n", error.what());
      _exit(kCutShortExit);
    }
    if (!body) {  // the worker closed the ring: done
      hop_trace::write();
      _exit(0);
    }
    RunBody run(*body);
    const std::int64_t chunk_started = now_ns();
    // The start time first, then the chunk: a worker that sees the new chunk must not pair it
    // with the previous item's start time (a chunk sent to a task process idle for longer than
    // its timeout could be killed as timed out at once).
    progress.item.store(0, std::memory_order_relaxed);
    progress.item_started_ns.store(chunk_started, std::memory_order_relaxed);
    progress.chunk.store(run.header().chunk_id, std::memory_order_release);
    hop_trace::mark(hop_trace::Point::task_started, run.header().chunk_id);
    std::int64_t last_flush = chunk_started;
    for (std::uint32_t i = 0; i < run.count(); ++i) {
      std::int64_t started = now_ns();
      progress.item.store(i, std::memory_order_relaxed);
      progress.item_started_ns.store(started, std::memory_order_release);
      runner.run(run, i, records);
      bool last = i + 1 == run.count();
      if (last) hop_trace::mark(hop_trace::Point::task_ended, run.header().chunk_id);
      if (last)
        task_frames::append_run_time(records, std::chrono::nanoseconds(now_ns() - chunk_started));
      // A long chunk reports as it goes, so that a crash loses little; every chunk reports
      // before the next starts, so that a crash is always blamed on the chunk it happened in.
      if (last || records.size() >= kFlushBytes || started - last_flush >= kFlushNanoseconds) {
        task_frames::write_answer(out, records);
        records.clear();
        last_flush = started;
      }
    }
    progress.answered.store(run.header().chunk_id, std::memory_order_release);
  }
}

[[noreturn]] void fail(const char* what) {
  throw Error(std::string("fiber: cannot ") + what +
              " for the task process: " + std::strerror(errno));
}

}  // namespace

void set_task_process_start(void (*start)()) { task_process_start = start; }

void TaskProcess::start() {
  // A memory of its own: the master may still hold the last child's, and write into it.
  memory_.emplace(TaskMemory::create());
  memory_->progress().item_started_ns.store(now_ns());
  taken_while_sending_.clear();
  auto death_pipe = posix::open_pipe(O_CLOEXEC);
  if (!death_pipe) fail("create a pipe");
  if (!answer_doorbell_) {
    answer_doorbell_ = posix::UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!answer_doorbell_) fail("create an eventfd");
  }
  memory_->up().set_reader_doorbell(answer_doorbell_.get());
  pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0) {
    death_pipe->read.reset();
    // (keeps the write end open)
    serve_chunks(memory_->down(), memory_->up(), memory_->progress(), memory_limit_);
  }
  setpgid(pid, pid);
  pid_ = pid;
  from_child_ = std::move(death_pipe->read);
}

std::string TaskProcess::reap() {
  from_child_.reset();
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  std::string how = describe_wait_status(status);
  if (memory_limit_ > 0 && WIFEXITED(status) && WEXITSTATUS(status) == kOverMemoryLimitExit) {
    how += fmt::format(" (over its memory limit of {} bytes, the pool's shape.memory_bytes)",
                       memory_limit_);
  }
  return how;
}

void TaskProcess::stop() {
  if (!running()) return;
  memory_->down().close();  // an idle child reads the end and exits
  // A child stuck in a task never reads: do not wait for it, unless it has hop marks to write.
  if (hop_trace::enabled()) {
    pollfd hung_up{from_child_.get(), POLLIN, 0};
    poll(&hung_up, 1, static_cast<int>(kTraceWriteWait.count()));
  }
  kill_group();
  reap();
}

std::string TaskProcess::kill() {
  kill_group();
  return reap();
}

void TaskProcess::kill_group() const {
  // The group is the child's pid until the child is reaped (its pid cannot be reused before), and
  // also holds what its tasks started.
  if (::kill(-pid_, SIGKILL) != 0) ::kill(pid_, SIGKILL);
}

bool TaskProcess::fits(std::size_t body) const {
  return memory_ && memory_->down().space() >= body + task_frames::kFrameOverhead;
}

bool TaskProcess::send(std::span<const char> body, const std::function<void()>& while_waiting) {
  if (!running()) return false;
  // A child that waits for room to answer must not wait for this one to take its answers.
  return task_frames::write_chunk(memory_->down(), body, kRoomWait, [&] {
    memory_->up().read_into(taken_while_sending_);
    if (while_waiting) while_waiting();
    return !child_gone();
  });
}

void TaskProcess::lend() { memory_->progress().lent.store(1); }

bool TaskProcess::busy() const {
  return !memory_->down().empty() || progress().chunk.load() != progress().answered.load();
}

bool TaskProcess::wait_for_death(std::chrono::milliseconds timeout, int wakes) const {
  pollfd watched[] = {{from_child_.get(), POLLIN, 0}, {wakes, POLLIN, 0}};  // (-1: not polled)
  return poll(watched, 2, static_cast<int>(timeout.count())) > 0 && watched[0].revents != 0;
}

bool TaskProcess::child_gone() const {
  pollfd hung_up{from_child_.get(), POLLIN, 0};
  return poll(&hung_up, 1, 0) != 0;
}

bool TaskProcess::receive(task_frames::AnswerReader& answers, std::chrono::microseconds wait,
                          std::string& death) {
  if (!taken_while_sending_.empty()) {
    answers.add(taken_while_sending_);
    taken_while_sending_.clear();
  }
  task_ring::Ring& up = memory_->up();
  if (answers.read_from(up) > 0) return true;
  if (up.wait_readable(wait) && answers.read_from(up) > 0) return true;
  if (!child_gone()) return true;
  answers.read_from(up);  // what it wrote before it died
  death = reap();
  return false;
}

bool TaskProcess::sleep_until_news(std::chrono::nanoseconds timeout, int doorbell) {
  std::uint64_t stale = 0;  // a wake-up left from an earlier sleep, which ended otherwise
  [[maybe_unused]] auto taken = ::read(answer_doorbell_.get(), &stale, sizeof stale);
  task_ring::Ring& up = memory_->up();
  if (!taken_while_sending_.empty() || !up.reader_may_sleep_on_doorbell()) return false;
  pollfd watched[] = {
      {answer_doorbell_.get(), POLLIN, 0}, {from_child_.get(), POLLIN, 0}, {doorbell, POLLIN, 0}};
  const timespec limit = posix::to_timespec(timeout);
  const bool rung = ::ppoll(watched, std::size(watched), &limit, nullptr) > 0 &&
                    (watched[2].revents & POLLIN) != 0;
  up.reader_awake();
  return rung;
}

}  // namespace fiber::detail
