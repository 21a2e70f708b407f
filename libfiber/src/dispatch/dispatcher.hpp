// The master's dispatcher: the wiring of the parts that run a master's pools. After start-up it
// makes every MPI call, in rounds that the progress engine runs (on its own thread, or on the
// thread of a caller waiting for its results). A round takes the results that arrived
// (result_reader) into their jobs, takes workers whose connection failed or that fell silent
// for lost (worker_set: their items go to others, scheduler; a replacement starts, pool_sizing),
// autoscales the pools (pool_sizing) and hands queued chunks to workers (scheduler). A failure of
// the dispatcher's own work breaks the runtime: every pending and later call fails.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/pool_handle.hpp"
#include "dispatch/pool_sizing.hpp"
#include "dispatch/progress_engine.hpp"
#include "dispatch/scheduler.hpp"
#include "dispatch/worker_set.hpp"

namespace fiber::detail {

class Dispatcher final : private ProgressEngine::Work {
 public:
  // `worker_argv` are the arguments spawned workers get (the master's own, without argv[0]);
  // `worker_program` what they run (empty: this program).
  explicit Dispatcher(std::vector<std::string> worker_argv, std::string worker_program = {});
  // Shuts every worker down, then stops the engine's thread.
  ~Dispatcher();

  // Jobs of calls sent to workers (initializers, broadcasts) for the caller to wait on.
  using JobsToAwait = PoolSizing::Jobs;

  // Lends `options.processes` workers to a new pool, spawning those the runtime lacks, and starts
  // the initializer on each; returns the pool and the initializer jobs to wait for.
  std::pair<std::shared_ptr<PoolHandle>, JobsToAwait> open_pool(const PoolOptions& options);
  // Grows or shrinks a pool; returns the initializer jobs of the workers it gained.
  JobsToAwait resize(const std::shared_ptr<PoolHandle>& pool, int processes);
  void submit(const std::shared_ptr<PoolHandle>& pool, std::shared_ptr<Job> job);
  // Runs `call` on every worker of the pool (after what they have queued) and on every worker
  // that joins it later; returns once sent. If it fails on a worker, the pool's calls after it
  // fail with its error (fail_after_broadcast).
  void broadcast(const std::shared_ptr<PoolHandle>& pool, const Call& call);
  // Fails the pool's pending work with PoolClosed and drops what its workers have queued.
  void terminate(const std::shared_ptr<PoolHandle>& pool);
  // Takes the workers back from a pool (after join or terminate); they park until a pool needs
  // them.
  void release(const std::shared_ptr<PoolHandle>& pool);

  int worker_count() const { return workers_.count(); }
  int parked_count() const { return workers_.parked_count(); }

 private:
  // ProgressEngine::Work
  bool step(ProgressEngine::Listen listen) override;
  bool must_poll() const override;
  bool may_sleep(std::vector<posix::FutexWatch>& watches) override;
  void awake() override;
  void fail(const std::exception_ptr& cause) override;
  void finish() override;

  // Runs `command` in a round, with the time read first; fails at once once broken.
  template <class Command>
  auto command(Command command) -> decltype(command());
  void on_message(int id, Message& message);
  // One result entry of a result message (kept alive by `message`, which results point into).
  void on_result(Worker& worker, const std::shared_ptr<const Bytes>& message,
                 std::span<const char> entry);
  void fail_after_broadcast(PoolHandle& pool, const ScheduledJob& broadcast,
                            const std::exception_ptr& error);
  // Takes every worker whose channel failed, or that fell silent, for lost; true if any.
  bool lose_failed_workers();
  void lose_silent_workers();
  void declare_dead(int id, const std::string& why);
  // Replaces the lost workers whose replacement waited for a node in doubt, once none is
  // (WorkerSet::node_in_doubt), looked at every kReplacementRetryPeriod.
  void replace_when_no_node_in_doubt();
  bool work_in_flight() const;
  void throw_if_broken() const;
  // Takes the workers' messages that arrived, as a round does first: a command that grows a pool
  // runs before its round's poll, and would miss the word of a parked worker's standby
  // (StandbyReady) that came while the dispatcher was idle. What it throws breaks the runtime.
  void take_arrived();
  // Stops what is in flight and shuts the workers down (finish()).
  void stop_workers();

  WorkerSet workers_;
  Scheduler scheduler_{workers_};
  std::vector<std::shared_ptr<PoolHandle>> pools_;
  Clock::time_point now_ = Clock::now();  // read once per round and per command
  std::vector<JobState::ItemResult> scratch_results_;
  std::exception_ptr broken_;  // set by fail()
  // A failpoint for tests of a broken runtime: the dispatcher fails as if from a bug once it has
  // taken this many results (environment variable FIBER_FAILPOINT_BREAK_AFTER_RESULTS; 0: never).
  const std::uint64_t break_after_results_;
  std::uint64_t results_taken_ = 0;
  PoolSizing sizing_{workers_, scheduler_, engine_};
  // Pools, once per lost worker, whose replacement waits (replace_when_no_node_in_doubt).
  std::vector<std::weak_ptr<PoolHandle>> waiting_replacements_;
  Clock::time_point last_replacement_look_{};
  // Last: its thread runs the rounds, which use everything above.
  ProgressEngine engine_{*this};
};

}  // namespace fiber::detail
