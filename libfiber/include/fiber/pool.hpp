/// \file
/// fiber::Pool: a pool of worker processes with Python multiprocessing.Pool's methods.
///
///   fiber::Pool pool({.processes = 8});
///   std::vector<double> r = pool.map(rollout_one, seeds);       // ordered
///   auto pending = pool.apply_async(rollout, 7ULL, 1000);      // fiber::AsyncResult<double>
///   for (double y : pool.imap_unordered(rollout_one, seeds)) {} // as results arrive
///
/// Functions passed to a pool must be registered with FIBER_TASK (or be a fiber::Task<Sig>).
/// Workers belong to the fiber::Runtime: a pool borrows them, and gives them back (parked) when
/// it is destroyed, so the next pool starts without spawning. Destroying a pool that still has
/// work terminates that work (its results fail with fiber::PoolClosed), as multiprocessing's
/// context manager does; call close() and join() first to let it finish.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fiber/async_result.hpp"
#include "fiber/detail/call_encoding.hpp"
#include "fiber/detail/input_feed.hpp"
#include "fiber/detail/job.hpp"
#include "fiber/detail/job_callback.hpp"
#include "fiber/detail/pool_fwd.hpp"
#include "fiber/detail/result_decoding.hpp"
#include "fiber/errors.hpp"
#include "fiber/export.hpp"
#include "fiber/reduction.hpp"
#include "fiber/result_stream.hpp"
#include "fiber/task.hpp"

namespace fiber {

/// Where a pool's tasks run.
enum class Isolation {
  /// In a task process that each worker forks: a task that segfaults, aborts, calls exit, is
  /// killed or hangs takes down only that process; the worker reports it and forks another, and
  /// the task is retried (see max_retries). Costs a pipe round trip per chunk.
  process,
  /// In the worker's MPI process itself: the fastest, but a crash loses the worker, and timeouts
  /// cannot be enforced.
  none,
};

/// What each worker of a pool needs (Uber Fiber's `@meta(cpu=, memory=, gpu=)`, Ray's
/// `num_cpus`/`num_gpus`, Dask's `resources=`): fiber::Pool pool({.processes = 8, .shape =
/// {.cores = 4, .memory_bytes = 8ULL << 30, .gpus = 1}}). A worker is spawned for its shape: a
/// parked worker goes to a pool of the same shape, or, with parked workers of its node lending
/// it their slots, to one of a wider shape (more cores). docs/guide/elasticity.md, "Worker
/// shapes", says how each part is enforced.
struct WorkerShape {
  /// Cores each worker is bound to, none shared with another shaped worker of its node, each
  /// counted as a slot; its thread pools are told the number (OMP_NUM_THREADS and the like). 0:
  /// one slot, not bound, thread pools left alone.
  int cores = 0;
  /// Most memory a worker's task process may allocate (RLIMIT_DATA: its heap and anonymous
  /// mappings); one that goes over it ends alone, its item failing with fiber::WorkerLost naming
  /// the limit. 0: no limit.
  std::uint64_t memory_bytes = 0;
  /// Devices each worker gets to itself (CUDA_VISIBLE_DEVICES), from its node's list: FIBER_GPUS,
  /// else Slurm's SLURM_STEP_GPUS or SLURM_JOB_GPUS. 0: none.
  int gpus = 0;
  /// Same cores, memory and devices.
  friend bool operator==(const WorkerShape&, const WorkerShape&) = default;
};

/// How a Pool is made: Python's Pool arguments and fiber's own. Designated initializers name
/// what differs from the defaults: fiber::Pool pool({.processes = 8, .task_timeout = 30s}).
struct PoolOptions {
  /// Number of workers; 0 means one per processor slot the job has (the allocation's slots less
  /// the master's under a batch system, the cores of this machine otherwise).
  int processes = 0;
  /// Run once on each worker before it takes this pool's tasks: fiber::call(f, args...). With
  /// Isolation::process it runs again in every task process that replaces a crashed one.
  std::optional<Call> initializer{};
  /// The initializer sets only its task process's own state, the same each time it runs, and
  /// nothing outside (fiber's Python pools: the master's folder, path and environment): a parked
  /// worker runs the one of its last pool again in its standby task process before it is asked,
  /// and a pool whose initializer is the same, byte for byte, takes such a worker without
  /// sending it the initializer or waiting for it (fewer initializer runs than workers in
  /// stats()). False: every worker a pool takes runs it, and the pool waits for it.
  bool initializer_runs_ahead = false;
  /// Items per chunk for map-like calls when the call does not say; 0 means automatic (chosen from
  /// measured task times, smaller toward the end of a call so that the tail is balanced).
  std::size_t chunksize = 0;
  /// Where tasks run: in a task process per worker (the default) or in the worker itself.
  Isolation isolation = Isolation::process;
  /// Python's maxtasksperchild: a worker's task process is replaced by a fresh one (which runs the
  /// initializer again) after it ran this many tasks, for task code that leaks. A task is a chunk,
  /// as in Python: one apply_async call, or one chunk of a map. Unset: no limit. Needs
  /// Isolation::process; 0 or less is rejected.
  std::optional<int> maxtasksperchild{};
  /// How often an item whose task process crashed or timed out is tried again before it fails
  /// with fiber::WorkerLost or fiber::TimeoutError (other items are not affected).
  int max_retries = 2;
  /// Longest an item may run (0: no limit); fiber::with_timeout(f, t) sets it per call.
  std::chrono::milliseconds task_timeout{0};
  /// A worker running tasks that is silent this long is taken for dead (its process was killed,
  /// its node lost): its tasks go to other workers and the pool gets a replacement.
  std::chrono::milliseconds worker_timeout{10'000};
  /// Autoscaling, when max_workers > 0: the pool grows toward max_workers while items wait, and
  /// parks a worker that was idle for scale_down_after, down to min_workers.
  int min_workers = 0;  ///< autoscaling: the fewest workers it shrinks to
  int max_workers = 0;  ///< autoscaling: the most it grows to; 0: no autoscaling
  std::chrono::milliseconds scale_down_after{
      5'000};  ///< autoscaling: idle time before a worker is parked
  /// What each worker needs: cores, memory, devices (fiber::WorkerShape); the default asks for
  /// one slot and nothing else.
  WorkerShape shape{};
};

/// Counters of one pool, from its start (pool.stats()).
struct PoolStats {
  int workers = 0;                    ///< workers the pool holds now
  int parked_workers = 0;             ///< workers of the runtime that no pool holds
  std::uint64_t tasks_completed = 0;  ///< items with a result or a task's exception
  std::uint64_t tasks_failed = 0;     ///< items that ended in an error of any kind
  std::uint64_t tasks_retried = 0;    ///< items sent again after a crash, timeout or lost worker
  std::uint64_t crashes = 0;          ///< task processes that died running an item
  std::uint64_t timeouts = 0;         ///< items killed at their deadline
  std::uint64_t workers_lost = 0;     ///< workers taken for dead
};

/// A pool of worker processes with Python multiprocessing.Pool's methods (see the file's
/// description). Used from the thread that made it.
class FIBER_EXPORT Pool {
 public:
  /// Borrows parked workers of the runtime and spawns the rest. Throws std::invalid_argument on
  /// a bad option and fiber::SpawnError if workers cannot be started.
  explicit Pool(PoolOptions options = {});
  /// Pool({.processes = processes}).
  explicit Pool(int processes) : Pool(PoolOptions{.processes = processes}) {}
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /// f applied to every item, results in item order. Throws the first failed item's error.
  /// For a task of several parameters each item is a tuple of them, as in starmap.
  template <class F, class Range>
  auto map(const F& f, const Range& items, std::size_t chunksize = 0) {
    return map_async(f, items, chunksize).get();
  }

  /// map without waiting: an AsyncResult of the vector of results.
  template <class F, class Range>
  auto map_async(const F& f, const Range& items, std::size_t chunksize = 0) {
    return map_async(f, items, chunksize, {});
  }

  /// With a callback and an error_callback (fiber::AsyncCallbacks), as Python's.
  template <class F, class Range>
  auto map_async(const F& f, const Range& items, std::size_t chunksize,
                 AsyncCallbacks<std::vector<detail::ResultOf<F>>> callbacks) {
    using R = detail::ResultOf<F>;
    static_assert(!std::is_void_v<R>, "map needs a task that returns a value");
    return AsyncResult<std::vector<R>>(
        submit_items<false>(f, items, chunksize,
                            calling_back(std::move(callbacks), &detail::decode_all<R>)),
        &detail::decode_all<R>);
  }

  /// map_async with automatic chunks and callbacks.
  template <class F, class Range>
  auto map_async(const F& f, const Range& items,
                 AsyncCallbacks<std::vector<detail::ResultOf<F>>> callbacks) {
    return map_async(f, items, 0, std::move(callbacks));
  }

  /// f(*tuple) for every tuple (std::tuple or std::pair) of `items`, results in item order.
  template <class F, class Range>
  auto starmap(const F& f, const Range& items, std::size_t chunksize = 0) {
    return starmap_async(f, items, chunksize).get();
  }

  /// starmap without waiting: an AsyncResult of the vector of results.
  template <class F, class Range>
  auto starmap_async(const F& f, const Range& items, std::size_t chunksize = 0) {
    return starmap_async(f, items, chunksize, {});
  }

  /// starmap_async with a callback and an error_callback (fiber::AsyncCallbacks).
  template <class F, class Range>
  auto starmap_async(const F& f, const Range& items, std::size_t chunksize,
                     AsyncCallbacks<std::vector<detail::ResultOf<F>>> callbacks) {
    using R = detail::ResultOf<F>;
    static_assert(!std::is_void_v<R>, "starmap needs a task that returns a value");
    return AsyncResult<std::vector<R>>(
        submit_items<true>(f, items, chunksize,
                           calling_back(std::move(callbacks), &detail::decode_all<R>)),
        &detail::decode_all<R>);
  }

  /// starmap_async with automatic chunks and callbacks.
  template <class F, class Range>
  auto starmap_async(const F& f, const Range& items,
                     AsyncCallbacks<std::vector<detail::ResultOf<F>>> callbacks) {
    return starmap_async(f, items, 0, std::move(callbacks));
  }

  /// Results in item order, each as soon as it and the ones before it are there. The input is
  /// read lazily, on a feeder thread, a bounded way ahead of the results taken (as Python's task
  /// feeder), so an endless or slow range works and overlaps with the work: an lvalue range is
  /// read in place (it must outlive the stream), a temporary one is moved into the stream.
  /// Destroying the stream stops the reading (after the item being read). With an explicit
  /// chunksize, an exception thrown by the input ends the stream at the start of its chunk, as in
  /// Python (that chunk does not run).
  template <class F, class Range>
  ResultStream<detail::ResultOf<F>> imap(const F& f, Range&& items, std::size_t chunksize = 0) {
    return ResultStream<detail::ResultOf<F>>(
        feed_items(f, std::forward<Range>(items), chunksize, detail::InputFeed::Order::submission));
  }

  /// Results in the order they complete; the input is read as for imap.
  template <class F, class Range>
  ResultStream<detail::ResultOf<F>> imap_unordered(const F& f, Range&& items,
                                                   std::size_t chunksize = 0) {
    return ResultStream<detail::ResultOf<F>>(
        feed_items(f, std::forward<Range>(items), chunksize, detail::InputFeed::Order::completion));
  }

  /// f(args...) on a worker, waiting for its result; the arguments are converted to the task's
  /// parameter types. Rethrows the task's error.
  template <class F, class... Args>
  detail::ResultOf<F> apply(const F& f, Args&&... args) {
    return apply_async(f, std::forward<Args>(args)...).get();
  }

  /// f(args...) on a worker without waiting: an AsyncResult of its result.
  template <class F, class... Args>
  AsyncResult<detail::ResultOf<F>> apply_async(const F& f, Args&&... args) {
    return apply_async({}, f, std::forward<Args>(args)...);
  }

  /// With a callback and an error_callback first (the task's arguments are the last ones):
  ///   pool.apply_async({.callback = [&](double r) { ... }}, rollout, 7, 1000);
  template <class F, class... Args>
  AsyncResult<detail::ResultOf<F>> apply_async(AsyncCallbacks<detail::ResultOf<F>> callbacks,
                                               const F& f, Args&&... args) {
    using R = detail::ResultOf<F>;
    auto job = single_call(f, std::forward<Args>(args)...);
    submit(job, calling_back(std::move(callbacks), &detail::ResultDecoder<R>::single));
    return AsyncResult<R>(std::move(job), &detail::ResultDecoder<R>::single);
  }

  /// Runs f(args...) once on every worker of the pool, after what each has queued, and on every
  /// worker that joins the pool later (or whose task process is replaced): for per-worker state
  /// that changes, e.g. the policy parameters of a generation, sent once per worker instead of
  /// once per task. A later broadcast of the same task replaces the earlier one for newcomers.
  /// Returns once sent: each worker runs it before what the pool gives it afterwards. The
  /// arguments are encoded once; a large broadcast crosses the network once per node (a worker
  /// there relays it to the others). If it fails on a worker, every call of the pool made after
  /// it fails with that error (fiber::TaskError), until the next broadcast.
  template <class F, class... Args>
  void broadcast(const F& f, Args&&... args) {
    broadcast_call(fiber::call(f, std::forward<Args>(args)...));
  }

  /// op(...op(op(f(x0), f(x1)), f(x2))..., f(xn-1)) in a tree that the pool's layout fixes: each
  /// worker folds its chunk's results, each node folds its chunks' partial results (they wait in
  /// the node's shared memory, not on the master), and the master folds one value per node. `op`
  /// is a registered task R op(R, R), R being f's result; it must be associative (e.g. a sum, a
  /// concatenation), and then the value is that of the sequential fold, up to rounding. For the
  /// same hosts with the same numbers of workers the value has the same bits, whoever runs what
  /// and whatever is lost and run again (docs/design.md, "Reductions combined on each node").
  /// `chunksize` 0: two chunks per worker; a task timeout applies to a chunk. A reduction not done
  /// when its pool is destroyed fails with fiber::PoolClosed.
  template <class F, class Range, class Op>
  auto map_reduce(const F& f, const Range& items, const Op& op, std::size_t chunksize = 0) {
    return map_reduce_async(f, items, op, chunksize).get();
  }

  /// map_reduce without waiting: a fiber::Reduction of the value.
  template <class F, class Range, class Op>
  Reduction<detail::ResultOf<F>> map_reduce_async(const F& f, const Range& items, const Op& op,
                                                  std::size_t chunksize = 0) {
    using R = detail::ResultOf<F>;
    static_assert(!std::is_void_v<R>, "map_reduce needs a task that returns a value");
    static_assert(std::is_same_v<detail::ResultOf<Op>, R> &&
                      std::is_same_v<detail::ParametersOf<Op>, std::tuple<R, R>>,
                  "map_reduce's operation must be a task R op(R, R) of the task's result R");
    auto [arguments, offsets] = encode_each(f, items);
    auto call = std::make_shared<detail::ReductionCall>(
        *this, detail::task_name(f), detail::task_name(op), std::move(arguments),
        std::move(offsets), chunksize, detail::timing_of(f));
    std::erase_if(reductions_, [](const auto& weak) { return weak.expired(); });
    reductions_.push_back(call);
    return Reduction<R>(std::move(call));
  }

  /// No more calls; work already submitted goes on. Calls after close() throw fiber::PoolClosed.
  void close();
  /// Waits until all submitted work is finished. Needs close() or terminate() first.
  void join();
  /// join() for at most `timeout`: true once all submitted work is finished; false if some still
  /// runs (call again to go on waiting: a caller that must also look at other things, such as a
  /// Python caller's signals, waits in slices).
  template <class Rep, class Period>
  bool join(std::chrono::duration<Rep, Period> timeout) {
    return join_until(detail::Clock::now() +
                      std::chrono::duration_cast<detail::Clock::duration>(timeout));
  }
  /// Stops now: pending work fails with fiber::PoolClosed, workers go back to the runtime.
  void terminate();

  /// Grows or shrinks the pool to n workers while it runs, losing nothing: growing takes parked
  /// workers first and spawns the rest (running the initializer on each); shrinking parks
  /// workers, those with work in flight once it is done. Throws fiber::SpawnError if workers
  /// cannot be started (e.g. more than the allocation has without oversubscription).
  void resize(int processes);

  /// The pool's counters now.
  PoolStats stats() const;

  /// Number of workers the pool has.
  int size() const;
  /// Where the pool's workers run.
  std::vector<WorkerInfo> workers() const;

 private:
  enum class State { running, closed, terminated };

  /// Star: each item is a tuple of the task's arguments. map and imap use it too for a task of
  /// several parameters (a one-parameter task always takes the item whole).
  template <bool Star = false, class F, class Range>
  static std::pair<Bytes, std::vector<std::uint64_t>> encode_each(const F&, const Range& items) {
    constexpr bool kUnpack = Star || std::tuple_size_v<detail::ParametersOf<F>> != 1;
    return detail::encode_items(items, [](Bytes& out, const auto& item) {
      if constexpr (kUnpack) {
        std::apply([&out](const auto&... args) { detail::encode_call<F>(out, args...); }, item);
      } else {
        detail::encode_call<F>(out, item);
      }
    });
  }

  template <bool Star, class F, class Range>
  std::shared_ptr<detail::Job> submit_items(const F& f, const Range& items, std::size_t chunksize,
                                            detail::JobCallback callback = {}) {
    auto [arguments, offsets] = encode_each<Star>(f, items);
    auto job = std::make_shared<detail::Job>(
        detail::task_name(f), std::move(arguments), std::move(offsets),
        chunksize ? chunksize : options_.chunksize, detail::timeout_of(f), detail::timing_of(f));
    submit(job, std::move(callback));
    return job;
  }

  friend class detail::ReductionCall;  ///< submits its stages as jobs
  friend class Process;                ///< submits its one call with a hook on its end

  /// One call of f(args...), encoded, not submitted yet.
  template <class F, class... Args>
  static std::shared_ptr<detail::Job> single_call(const F& f, Args&&... args) {
    Bytes arguments;
    detail::encode_call<F>(arguments, std::forward<Args>(args)...);
    std::vector<std::uint64_t> offsets{0, arguments.size()};
    return std::make_shared<detail::Job>(detail::task_name(f), std::move(arguments),
                                         std::move(offsets), 1, detail::timeout_of(f),
                                         detail::timing_of(f));
  }
  /// imap's input, read by an InputFeed: each item encoded as submit_items encodes it.
  template <class F, class Range>
  std::shared_ptr<detail::InputFeed> feed_items(const F& f, Range&& items, std::size_t chunksize,
                                                detail::InputFeed::Order order) {
    constexpr bool kUnpack = std::tuple_size_v<detail::ParametersOf<F>> != 1;
    using View = std::views::all_t<Range>;
    struct Reader {
      View view;
      std::optional<std::ranges::iterator_t<View>> at{};
    };
    auto reader = std::make_shared<Reader>(Reader{std::views::all(std::forward<Range>(items))});
    // Steps to the next item only when asked for it: an exception from the range is thrown at
    // the position of the item it could not give.
    detail::InputFeed::Source source = [reader](Bytes& out) {
      if (!reader->at) {
        reader->at.emplace(std::ranges::begin(reader->view));
      } else {
        ++*reader->at;
      }
      if (*reader->at == std::ranges::end(reader->view)) return false;
      if constexpr (kUnpack) {
        std::apply([&out](const auto&... args) { detail::encode_call<F>(out, args...); },
                   **reader->at);
      } else {
        detail::encode_call<F>(out, **reader->at);
      }
      return true;
    };
    return start_feed(std::move(source), detail::task_name(f), chunksize, detail::timeout_of(f),
                      detail::timing_of(f), order);
  }
  std::shared_ptr<detail::InputFeed> start_feed(detail::InputFeed::Source source, std::string task,
                                                std::size_t chunksize,
                                                std::chrono::milliseconds timeout,
                                                std::string timed_as,
                                                detail::InputFeed::Order order);

  /// What runs on the result handler when a job with callbacks is done (nothing without them).
  template <class T>
  static detail::JobCallback calling_back(AsyncCallbacks<T> callbacks,
                                          T (*decode)(const detail::Job&)) {
    if (!callbacks.callback && !callbacks.error_callback) return {};
    return [callbacks = std::move(callbacks), decode](const detail::Job& job) {
      detail::call_back(callbacks, decode, job);
    };
  }

  /// join(), or join(timeout) until `deadline`.
  bool join_until(std::optional<detail::Clock::time_point> deadline);
  /// `callback`, if any, runs on the result handler once the job is done (AsyncCallbacks).
  void submit(const std::shared_ptr<detail::Job>& job, detail::JobCallback callback = {});
  void call_when_done(const std::shared_ptr<detail::Job>& job, detail::JobCallback callback);
  /// Throws if the pool takes no calls, or none with this timeout.
  void check_accepts(std::chrono::milliseconds timeout) const;
  /// Stops reading the inputs of the pool's imap calls (terminate, destruction).
  void stop_feeds(const char* why);
  void broadcast_call(const Call& call);

  PoolOptions options_;
  std::shared_ptr<detail::PoolHandle> handle_;
  State state_ = State::running;
  std::deque<std::weak_ptr<detail::Job>> submitted_;       ///< for join(); finished ones pruned
  std::shared_ptr<detail::ResultHandler> result_handler_;  ///< made by the first callback
  std::vector<std::weak_ptr<detail::InputFeed>> feeds_;    ///< imap inputs; expired ones pruned
  /// map_reduce calls, told when the pool is destroyed; expired ones pruned.
  std::vector<std::weak_ptr<detail::ReductionCall>> reductions_;
};

}  // namespace fiber
