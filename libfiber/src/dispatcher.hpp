// The master's dispatcher: it makes every MPI call after start-up. It starts workers
// (MPI_Comm_spawn, one process per call so that each can be handled alone: docs/platform.md, "A
// disconnect acts on a whole spawn"), lends them to pools and takes them back (parked, never
// ended: "A process that exits can hang a later spawn"), cuts the pools' jobs into chunks,
// keeps a few chunks in flight per worker (a pull with prefetch: a result is the worker's request
// for more), stores results in the jobs as they arrive, re-sends the items of crashed task
// processes and of workers that went silent, and grows or shrinks pools. It runs on
// its own thread, so work progresses while the caller computes. While a caller waits for its
// results, the caller's thread does this work itself and the dispatcher thread steps aside: a
// result then reaches its caller with no hand-over between threads (an empty apply_async + get
// went from 18-20 us to ~5 us here). The progress lock makes whoever holds it the dispatcher.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fiber/detail/job.hpp"
#include "mpi/intercomm.hpp"
#include "pool_handle.hpp"
#include "protocol.hpp"

namespace fiber::detail {

class Dispatcher final : public ProgressDriver {
 public:
  // `worker_argv` are the arguments spawned workers get (the master's own, without argv[0]).
  explicit Dispatcher(std::vector<std::string> worker_argv);
  // Stops the thread after shutting every worker down.
  ~Dispatcher();

  // Jobs of calls sent to workers (initializers, broadcasts) for the caller to wait on.
  using JobsToAwait = std::vector<std::shared_ptr<Job>>;

  // Lends `options.processes` workers to a new pool, spawning those the runtime lacks, and starts
  // the initializer on each; returns the pool and the initializer jobs to wait for.
  std::pair<std::shared_ptr<PoolHandle>, JobsToAwait> open_pool(const PoolOptions& options);
  // Grows or shrinks a pool; returns the initializer jobs of the workers it gained.
  JobsToAwait resize(const std::shared_ptr<PoolHandle>& pool, int processes);
  void submit(const std::shared_ptr<PoolHandle>& pool, std::shared_ptr<Job> job);
  // Runs `call` on every worker of the pool (after what they have queued) and on every worker
  // that joins it later; returns the jobs to wait for.
  JobsToAwait broadcast(const std::shared_ptr<PoolHandle>& pool, const Call& call);
  // Fails the pool's pending work with PoolClosed and drops what its workers have queued.
  void terminate(const std::shared_ptr<PoolHandle>& pool);
  // Takes the workers back from a pool (after join or terminate); they park until a pool needs
  // them.
  void release(const std::shared_ptr<PoolHandle>& pool);

  // Makes progress on the calling thread until ready() or the deadline (ProgressDriver).
  bool drive(const std::function<bool()>& ready,
             std::optional<Clock::time_point> deadline) override;

  int worker_count() const { return worker_count_.load(); }
  int parked_count() const { return parked_count_.load(); }

 private:
  struct InFlight {
    std::uint64_t chunk_id;
    std::shared_ptr<Job> job;
    std::shared_ptr<PoolHandle> pool;
    std::size_t first;
    std::size_t count;
  };
  struct Worker {
    explicit Worker(MPI_Comm intercomm) : comm(intercomm), channel(intercomm) {}
    mpi::Intercomm comm;
    Channel channel;
    WorkerInfo info;
    PoolHandle* pool = nullptr;
    std::deque<InFlight> in_flight;
    Clock::time_point last_result{};  // when it last answered: a busy worker gets no prefetch
    Clock::time_point last_heard{};   // any message: a silent busy worker is taken for dead
    Clock::time_point idle_since{};   // for autoscaling down
    bool parked = false;
    bool dead = false;  // taken for lost: in no pool, sent nothing, but still listened to
    // Its channel failed (an MPI error on its requests: it died mid-message, its connection
    // broke): lost for good, never listened to again, released without a disconnect at the end.
    bool unreachable = false;
    // Results of chunks sent before it was taken for lost (re-sent elsewhere) are ignored.
    std::uint64_t stale_chunks_below = 0;
  };
  // Mean time per item of each task, measured on the workers, for chunk sizes and prefetch.
  struct TaskTiming {
    double seconds_per_item = 0;
    bool measured = false;
  };

  void loop();
  // What a round of the dispatcher's work does first.
  enum class Listen { to_workers, no };
  // One round of the dispatcher's work: commands, results (unless Listen::no), autoscaling, sends,
  // deadlines. The caller holds progress_mutex_. True if anything happened.
  bool step(Listen listen = Listen::to_workers);
  // Whether the dispatcher thread must poll: work in flight or autoscaling.
  bool must_poll() const;
  // Runs `command` on the dispatcher and waits for it; exceptions come back to the caller.
  template <class Command>
  auto run_on_dispatcher(Command command) -> decltype(command());
  // Queues a command for the dispatcher's next round; `wake`: tell the dispatcher thread.
  void post(std::function<void()> command, bool wake = true);
  void wake_if_asleep();

  int spawn_worker();
  // Gives the pool one more worker (parked first, else spawned); its initializer job, if any.
  std::shared_ptr<Job> add_worker(const std::shared_ptr<PoolHandle>& pool);
  // Sends `call` alone to one worker; the job to wait for.
  std::shared_ptr<Job> send_call(Worker& worker, const std::shared_ptr<PoolHandle>& pool,
                                 const Call& call, std::uint32_t flags);
  JobsToAwait grow(const std::shared_ptr<PoolHandle>& pool, int count);
  void shrink(PoolHandle& pool, int count);
  // Takes a worker from its pool; it parks once its chunks in flight are answered.
  void remove_from_pool(int worker_id);
  void park_if_drained(int worker_id);

  // Sends a chunk to a worker; a small one joins `batch` when given (sent by the caller).
  void send_chunk(Worker& worker, const std::shared_ptr<PoolHandle>& pool,
                  const std::shared_ptr<Job>& job, std::size_t first, std::size_t count,
                  std::uint32_t flags = 0, Batch* batch = nullptr);
  // The measured timing of a job's task, or null before the first measurement.
  const TaskTiming* timing_of(const Job& job) const;
  std::size_t chunk_size(const PoolHandle& pool, const Job& job) const;
  std::size_t in_flight_limit(const Job& job, std::size_t chunk) const;
  bool dispatch();
  bool poll_workers();
  // Handles a completed receive of worker `id`: a message, or the next piece of a large one.
  void take_message(int id, const MPI_Status& status);
  // Takes every worker whose channel failed for lost (its items go to others); true if any.
  bool lose_failed_workers();
  // One result entry of a result message (kept alive by `message`, which results point into).
  void on_result(Worker& worker, const std::shared_ptr<const Bytes>& message,
                 std::span<const char> body);
  // Item `item` of a chunk failed without an answer (crash, timeout, lost worker): try it again,
  // or give up on it with `error` once it failed more than max_retries times.
  void retry_or_fail(const InFlight& chunk, std::size_t item, const std::exception_ptr& error);
  // Sends items [first, first + count) again, with no failure counted.
  void requeue(const InFlight& chunk, std::size_t first, std::size_t count);
  void check_deadlines();
  void declare_dead(int worker_id, const std::string& why);
  // A worker taken for lost answered again: it drops what it held and waits parked for reuse.
  void revive(int worker_id);
  void autoscale();
  // The dispatcher's own work failed (not one worker's: MPI as a whole, or a bug): every pending
  // result fails with `cause`, and so does every later call (mpi4py.futures' broken executor).
  // The program can still checkpoint and exit.
  void break_down(const std::exception_ptr& cause);
  void throw_if_broken() const;
  // One round of step(), which catches what it throws.
  bool step_once(Listen listen);
  bool work_in_flight() const;
  // Stops every worker (stop_workers); if that fails, forgets them without waiting.
  void shutdown_workers();
  void stop_workers();

  const std::vector<std::string> worker_argv_;
  std::string executable_;

  // Whoever holds it is the dispatcher: the dispatcher thread, or a caller that waits for its
  // results or submits while nobody else is dispatching. Everything below "The dispatcher's
  // state" is only touched under it, and so is MPI (MPI_THREAD_SERIALIZED).
  std::mutex progress_mutex_;
  std::atomic<int> drivers_{0};  // callers waiting for results and driving progress meanwhile
  // The dispatcher thread sleeps until told (nothing to poll for a while): a caller that leaves
  // work in flight must wake it.
  std::atomic<bool> asleep_{false};

  // Commands from other threads.
  std::mutex inbox_mutex_;
  std::condition_variable inbox_changed_;
  std::vector<std::function<void()>> inbox_;
  std::atomic<bool> inbox_filled_{false};  // a look without the lock
  bool stopping_ = false;
  bool unwatched_ = false;  // a caller left work in flight while the dispatcher thread slept

  // The dispatcher's state.
  std::vector<std::unique_ptr<Worker>> workers_;  // index = worker id
  std::vector<MPI_Request> receives_;             // index = worker id
  std::vector<int> parked_;                       // ids of workers no pool holds
  std::vector<std::shared_ptr<PoolHandle>> pools_;
  std::unordered_map<std::string, TaskTiming> timings_;
  mutable const std::pair<const std::string, TaskTiming>* last_timing_ = nullptr;
  Clock::time_point now_ = Clock::now();  // read once per round
  Clock::time_point last_activity_ = Clock::now();
  std::vector<std::uint64_t> scratch_offsets_;
  std::vector<Job::ItemResult> scratch_results_;
  std::uint64_t next_chunk_id_ = 1;
  Clock::time_point last_deadline_check_{};
  // Silence needed before a worker is taken for lost, as a multiple of worker_timeout: doubled
  // when losses follow each other closely (an overloaded node starves workers that are alive,
  // and replacing them would only add processes), back to 1 after a calm period.
  int silence_scale_ = 1;
  Clock::time_point last_loss_{};
  std::exception_ptr broken_;  // set by break_down
  // A failpoint for tests of a broken runtime: the dispatcher fails as if from a bug once it has
  // taken this many results (environment variable FIBER_FAILPOINT_BREAK_AFTER_RESULTS; 0: never).
  const std::uint64_t break_after_results_;
  std::uint64_t results_taken_ = 0;
  std::uint64_t failures_handled_ = 0;  // Channel::failures_so_far() when last looked at
  std::atomic<int> worker_count_{0};
  std::atomic<int> parked_count_{0};

  std::thread thread_;
};

}  // namespace fiber::detail
