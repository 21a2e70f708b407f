#include "fiber/process.hpp"

#include <signal.h>

#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "caller/job_state.hpp"
#include "fiber/errors.hpp"
#include "queue/process_read_ends.hpp"

namespace fiber {
namespace {

// Python's exitcode for a task that failed with `error`.
int exitcode_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const WorkerLost& lost) {
    // Its worker was lost: its task process was killed with it (SIGKILL, its parent-death
    // signal) or by it when told to drop the call.
    return lost.exitcode().value_or(-SIGKILL);
  } catch (...) {
    return 1;  // the function raised (fiber::TaskError), or its result did not decode
  }
}

}  // namespace

Process::~Process() {
  pool_.reset();  // terminates a call still running
  if (read_ends_) read_ends_->ended();
}

Process& Process::with_shape(WorkerShape shape) {
  if (pool_ || exitcode_) throw std::logic_error("fiber: a Process's shape is set before start()");
  shape_ = shape;
  return *this;
}

Process& Process::with_initializer(Call initializer, bool runs_ahead) {
  if (pool_ || exitcode_) {
    throw std::logic_error("fiber: a Process's initializer is set before start()");
  }
  initializer_ = std::move(initializer);
  initializer_runs_ahead_ = runs_ahead;
  return *this;
}

void Process::start() {
  if (pool_ || exitcode_) throw std::logic_error("fiber: a Process can be started only once");
  // One try: a crash ends the process, as in Python, instead of running the function again.
  pool_ = std::make_unique<Pool>(PoolOptions{.processes = 1,
                                             .initializer = initializer_,
                                             .initializer_runs_ahead = initializer_runs_ahead_,
                                             .max_retries = 0,
                                             .shape = shape_});
  std::vector<detail::PipeChannel> passed;
  {
    detail::ReadEndsPassed collecting;
    running_ = launch_();
    passed = collecting.take();
  }
  if (!passed.empty()) {
    read_ends_ = std::make_shared<detail::ProcessReadEnds>(std::move(passed));
    // Run by the thread that stores its outcome (the dispatcher's, or a caller's driving it),
    // before a join returns: a few locks held briefly, no wait.
    auto& state = running_->job->state();
    state.call_when_done([read_ends = read_ends_, &state] {
      read_ends->ended();
      state.callback_finished();
    });
  }
  pool_->submit(running_->job);
}

void Process::join() { join_for(std::nullopt); }

bool Process::join_for(std::optional<std::chrono::milliseconds> timeout) {
  if (!pool_ && !exitcode_) throw std::logic_error("fiber: can only join a started Process");
  if (exitcode_) return true;
  if (!running_->wait(timeout)) return false;
  exitcode_ = exitcode();
  release();
  return true;
}

bool Process::is_alive() const { return running_ && !exitcode_ && !running_->wait(kNoWait); }

std::optional<int> Process::exitcode() const {
  if (exitcode_) return exitcode_;
  if (!running_ || !running_->wait(kNoWait)) return std::nullopt;
  try {
    running_->rethrow();
    return 0;
  } catch (...) {
    return exitcode_of(std::current_exception());
  }
}

void Process::terminate() {
  if (!is_alive()) return;
  exitcode_ = -SIGTERM;
  pool_->terminate();
  release();
}

void Process::release() {
  pool_.reset();
  running_.reset();
  if (read_ends_) read_ends_->ended();
}

}  // namespace fiber
