#include "task_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "fiber/errors.hpp"
#include "item_runner.hpp"
#include "process/exit_status.hpp"

namespace fiber::detail {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records are written in batches: a write per item would cost more than a small task.
constexpr std::size_t kFlushBytes = std::size_t{256} * 1024;
constexpr std::int64_t kFlushNanoseconds = 2'000'000;
// The child's status when its chunk pipe broke off mid-frame (its worker died writing).
constexpr int kCutShortExit = 1;

// The child: reads chunks, runs their items, writes their records. Never returns.
[[noreturn]] void serve_chunks(int in, int out, TaskProcess::Progress& progress) {
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

  ItemRunner runner;
  task_pipe::ChunkReader chunks(in);
  Bytes records;
  for (;;) {
    std::optional<std::span<const char>> body;
    try {
      body = chunks.next();
    } catch (const task_pipe::PipeError& error) {
      std::fprintf(stderr, "%s\n", error.what());
      _exit(kCutShortExit);
    }
    if (!body) _exit(0);  // the worker closed the pipe: done
    RunBody run(*body);
    const std::int64_t chunk_started = now_ns();
    // The start time first, then the chunk: a worker that sees the new chunk must not pair it
    // with the previous item's start time (a chunk sent to a task process idle for longer than
    // its timeout could be killed as timed out at once).
    progress.item.store(0, std::memory_order_relaxed);
    progress.item_started_ns.store(chunk_started, std::memory_order_relaxed);
    progress.chunk.store(run.header().chunk_id, std::memory_order_release);
    std::int64_t last_flush = chunk_started;
    for (std::uint32_t i = 0; i < run.count(); ++i) {
      std::int64_t started = now_ns();
      progress.item.store(i, std::memory_order_relaxed);
      progress.item_started_ns.store(started, std::memory_order_release);
      runner.run(run, i, records);
      bool last = i + 1 == run.count();
      if (last)
        task_pipe::append_run_time(records, std::chrono::nanoseconds(now_ns() - chunk_started));
      // A long chunk reports as it goes, so that a crash loses little; every chunk reports
      // before the next starts, so that a crash is always blamed on the chunk it happened in.
      if (last || records.size() >= kFlushBytes || started - last_flush >= kFlushNanoseconds) {
        if (!task_pipe::write_answer(out, records)) _exit(0);
        records.clear();
        last_flush = started;
      }
    }
  }
}

[[noreturn]] void fail(const char* what) {
  throw Error(std::string("fiber: cannot ") + what +
              " for the task process: " + std::strerror(errno));
}

}  // namespace

void TaskProcess::start() {
  if (!progress_page_) {
    auto page = posix::MappedRegion::shared_anonymous(sizeof(Progress));
    if (!page) fail("map memory");
    progress_page_ = std::move(*page);
    new (progress_page_.data()) Progress();
  }
  progress().chunk.store(0);
  progress().item.store(0);
  progress().item_started_ns.store(now_ns());
  auto down = posix::open_pipe(O_CLOEXEC);
  if (!down) fail("create a pipe");
  auto up = posix::open_pipe(O_CLOEXEC);
  if (!up) fail("create a pipe");
  pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0) {
    down->write.reset();
    up->read.reset();
    serve_chunks(down->read.get(), up->write.get(), progress());
  }
  pid_ = pid;
  to_child_ = std::move(down->write);
  from_child_ = std::move(up->read);
  fcntl(from_child_.get(), F_SETFL, O_NONBLOCK);
}

std::string TaskProcess::reap() {
  to_child_.reset();
  from_child_.reset();
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return describe_wait_status(status);
}

void TaskProcess::stop() {
  if (!running()) return;
  to_child_.reset();  // the child reads end of file and exits
  // A child stuck in a task never reads: do not wait for it.
  ::kill(pid_, SIGKILL);
  reap();
}

std::chrono::steady_clock::time_point TaskProcess::item_started() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::nanoseconds(progress().item_started_ns.load(std::memory_order_acquire)));
}

std::string TaskProcess::kill() {
  ::kill(pid_, SIGKILL);
  return reap();
}

bool TaskProcess::send(std::span<const char> body) {
  // A closed pipe must show as a failed write, not kill the worker with SIGPIPE.
  static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;
  return task_pipe::write_chunk(to_child_.get(), body);
}

bool TaskProcess::receive(task_pipe::AnswerReader& answers, std::chrono::microseconds wait,
                          std::string& death) {
  pollfd readable{from_child_.get(), POLLIN, 0};
  timespec timeout{static_cast<time_t>(wait.count() / 1'000'000),
                   static_cast<long>(wait.count() % 1'000'000) * 1000};
  if (wait.count() > 0) ppoll(&readable, 1, &timeout, nullptr);
  if (answers.read_from(from_child_.get())) return true;
  death = reap();  // end of file: the child is gone
  return false;
}

}  // namespace fiber::detail
