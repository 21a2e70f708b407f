#include "task_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "chunk.hpp"
#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

bool write_full(int fd, const void* data, std::size_t size) {
  const auto* at = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t put = ::write(fd, at, size);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    at += put;
    size -= static_cast<std::size_t>(put);
  }
  return true;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records are written in batches: a write per item would cost more than a small task.
constexpr std::size_t kFlushBytes = std::size_t{256} * 1024;
constexpr std::int64_t kFlushNanoseconds = 2'000'000;

// The child: reads chunks, runs their items, writes their records. Never returns.
[[noreturn]] void serve_chunks(int in, int out, TaskProcess::Progress* progress) {
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
  Bytes input, records;
  std::size_t consumed = 0;  // input before it has been run
  char buffer[64 * 1024];
  for (;;) {
    std::uint64_t size = 0;
    bool complete = input.size() - consumed >= sizeof size;
    if (complete) {
      std::memcpy(&size, input.data() + consumed, sizeof size);
      complete = input.size() - consumed - sizeof size >= size;
    }
    if (!complete) {
      input.erase(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(consumed));
      consumed = 0;
      ssize_t got = ::read(in, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) _exit(0);  // the worker closed the pipe: done
      input.insert(input.end(), buffer, buffer + got);
      continue;
    }
    RunBody run(std::span<const char>(input).subspan(consumed + sizeof size, size));
    consumed += sizeof size + size;
    const std::int64_t chunk_started = now_ns();
    // The start time first, then the chunk: a worker that sees the new chunk must not pair it
    // with the previous item's start time (a chunk sent to a task process idle for longer than
    // its timeout could be killed as timed out at once).
    progress->item.store(0, std::memory_order_relaxed);
    progress->item_started_ns.store(chunk_started, std::memory_order_relaxed);
    progress->chunk.store(run.header().chunk_id, std::memory_order_release);
    std::int64_t last_flush = chunk_started;
    for (std::uint32_t i = 0; i < run.count(); ++i) {
      std::int64_t started = now_ns();
      progress->item.store(i, std::memory_order_relaxed);
      progress->item_started_ns.store(started, std::memory_order_release);
      runner.run(run, i, records);
      bool last = i + 1 == run.count();
      // The chunk's run time follows its last record: the worker cannot time it, the chunk may
      // have waited in the pipe behind others.
      if (last) append_raw(records, now_ns() - chunk_started);
      // A long chunk reports as it goes, so that a crash loses little; every chunk reports
      // before the next starts, so that a crash is always blamed on the chunk it happened in.
      if (last || records.size() >= kFlushBytes || started - last_flush >= kFlushNanoseconds) {
        if (!write_full(out, records.data(), records.size())) _exit(0);
        records.clear();
        last_flush = started;
      }
    }
  }
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + (name ? "SIG" + std::string(name) : std::to_string(signal)) +
           " (" + strsignal(signal) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

void TaskProcess::start() {
  if (!progress_) {
    void* shared =
        mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
      throw Error(std::string("fiber: cannot map memory for the task process: ") +
                  std::strerror(errno));
    }
    progress_ = new (shared) Progress();
  }
  progress_->chunk.store(0);
  progress_->item.store(0);
  progress_->item_started_ns.store(now_ns());
  int down[2], up[2];
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) {
    throw Error(std::string("fiber: cannot create a pipe for the task process: ") +
                std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    throw Error(std::string("fiber: cannot fork the task process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(down[1]);
    ::close(up[0]);
    serve_chunks(down[0], up[1], progress_);
  }
  ::close(down[0]);
  ::close(up[1]);
  pid_ = pid;
  to_child_ = down[1];
  from_child_ = up[0];
  fcntl(from_child_, F_SETFL, O_NONBLOCK);
}

std::string TaskProcess::reap() {
  ::close(to_child_);
  ::close(from_child_);
  to_child_ = from_child_ = -1;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return describe(status);
}

void TaskProcess::stop() {
  if (!running()) return;
  ::close(to_child_);  // the child reads end of file and exits
  to_child_ = -1;
  // A child stuck in a task never reads: do not wait for it.
  ::kill(pid_, SIGKILL);
  reap();
}

std::chrono::steady_clock::time_point TaskProcess::item_started() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::nanoseconds(progress_->item_started_ns.load(std::memory_order_acquire)));
}

std::string TaskProcess::kill() {
  ::kill(pid_, SIGKILL);
  return reap();
}

bool TaskProcess::send(std::span<const char> body) {
  // A closed pipe must show as a failed write, not kill the worker with SIGPIPE.
  static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;
  std::uint64_t size = body.size();
  if (size + sizeof size <= 4096) {  // one write for a small chunk
    char frame[4096];
    std::memcpy(frame, &size, sizeof size);
    std::memcpy(frame + sizeof size, body.data(), size);
    return write_full(to_child_, frame, sizeof size + size);
  }
  return write_full(to_child_, &size, sizeof size) && write_full(to_child_, body.data(), size);
}

bool TaskProcess::receive(Bytes& out, std::chrono::microseconds wait, std::string& death) {
  pollfd readable{from_child_, POLLIN, 0};
  timespec timeout{static_cast<time_t>(wait.count() / 1'000'000),
                   static_cast<long>(wait.count() % 1'000'000) * 1000};
  if (wait.count() > 0) ppoll(&readable, 1, &timeout, nullptr);
  char buffer[64 * 1024];
  for (;;) {
    ssize_t got = ::read(from_child_, buffer, sizeof buffer);
    if (got > 0) {
      out.insert(out.end(), buffer, buffer + got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    death = reap();  // end of file: the child is gone
    return false;
  }
}

}  // namespace fiber::detail
