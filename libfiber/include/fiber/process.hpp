/// \file
/// fiber::Process: Python's multiprocessing.Process, a registered function run once on a worker
/// process of the job.
///
///   fiber::Process actor(run_actor, queue, 7);
///   actor.start();
///   actor.join();               // or join(5s): true if it ended in time
///   actor.exitcode();           // 0 returned, 1 raised, -11 segfaulted, -15 terminated,
///                               // -9 its worker lost
///
/// It is a pool of one worker running one task (Isolation::process): the runtime places the
/// worker as it places pool workers, a crash takes down only the task's process (its signal is
/// the exitcode), and the worker goes back to the runtime, parked, once the process has ended
/// and was joined (or the Process is destroyed). Destroying a Process that still runs terminates
/// it. The function's result, if any, is dropped: send results back through a fiber::Queue.
/// A Pipe's reading end given to a Process is its own: once it has ended, a send to an end it
/// never read throws fiber::Error, as a send to one it read does once its process is gone.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fiber/async_result.hpp"
#include "fiber/export.hpp"
#include "fiber/pool.hpp"

namespace fiber {
namespace detail {
class ProcessReadEnds;
}

/// A registered function run once on a worker process (Python's multiprocessing.Process; see
/// the file's description).
class FIBER_EXPORT Process {
 public:
  /// f(args...) to run on a worker once start() is called (the arguments are copied until then).
  template <class F, class... Args>
  explicit Process(const F& f, Args&&... args)
      : launch_([f, arguments = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)] {
          auto job = std::apply(
              [&](const auto&... values) { return Pool::single_call(f, values...); }, arguments);
          AsyncResult<detail::ResultOf<F>> result(
              job, &detail::ResultDecoder<detail::ResultOf<F>>::single);
          return Running{job,
                         [result](std::optional<std::chrono::milliseconds> timeout) {
                           if (!timeout) {
                             result.wait();
                             return true;
                           }
                           return result.wait(*timeout);
                         },
                         [result] { static_cast<void>(result.get()); }};
        }) {}
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  /// What its worker needs (fiber::WorkerShape: cores, memory, devices), set before start();
  /// after it, std::logic_error. Bad values throw std::invalid_argument at start(), as Pool's.
  Process& with_shape(WorkerShape shape);
  /// Runs `initializer` on its worker before the function, as a Pool's
  /// (PoolOptions::initializer, and PoolOptions::initializer_runs_ahead for `runs_ahead`); set
  /// before start(), after it std::logic_error. start() waits for it and throws its error.
  Process& with_initializer(Call initializer, bool runs_ahead = false);
  /// Runs the function on a worker. A Process starts once: a second start throws
  /// std::logic_error.
  void start();
  /// Waits until the process has ended.
  void join();
  /// Waits at most `timeout`; true if the process has ended.
  template <class Rep, class Period>
  bool join(std::chrono::duration<Rep, Period> timeout) {
    return join_for(std::chrono::ceil<std::chrono::milliseconds>(timeout));
  }
  /// Started and not ended.
  bool is_alive() const;
  /// Empty while it runs (or before start); then 0 if the function returned, 1 if it threw, -N
  /// if a signal N killed it (-15, SIGTERM, after terminate()), N if it called exit(N), -9
  /// (SIGKILL) if its worker was lost (its process was killed with it).
  std::optional<int> exitcode() const;
  /// Kills the process now (exitcode -15, as Python's SIGTERM); nothing if it has ended.
  void terminate();

 private:
  /// A call, submitted by start(): waits for it (without a timeout: until it ends), and rethrows
  /// how it failed.
  struct Running {
    std::shared_ptr<detail::Job> job;
    std::function<bool(std::optional<std::chrono::milliseconds>)> wait;
    std::function<void()> rethrow;
  };

  static constexpr std::chrono::milliseconds kNoWait{0};

  bool join_for(std::optional<std::chrono::milliseconds> timeout);
  /// After the end: gives the worker back to the runtime.
  void release();

  std::function<Running()> launch_;  ///< encodes the call
  std::unique_ptr<Pool> pool_;
  std::shared_ptr<detail::ProcessReadEnds> read_ends_;  ///< the Pipe reading ends it was given
  std::optional<Running> running_;
  std::optional<int> exitcode_;
  WorkerShape shape_{};              ///< what its worker needs
  std::optional<Call> initializer_;  ///< run on its worker before the function
  bool initializer_runs_ahead_ = false;
};

}  // namespace fiber
