#include "dispatcher.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "backoff.hpp"
#include "fiber/errors.hpp"
#include "launch_defaults.hpp"
#include "mpi/error.hpp"
#include "mpi/info.hpp"
#include "run_identity.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// How long a spawned worker may take to say hello before the spawn counts as failed.
constexpr auto kHelloTimeout = 120s;
// At most this many times worker_timeout of silence before a worker is taken for lost.
constexpr int kMaxSilenceScale = 32;
// ... back to once worker_timeout when no worker was lost for this many times worker_timeout.
constexpr int kCalmAfterLosses = 30;
// A chunk should run about this long when the chunk size is automatic: long enough that the
// per-chunk cost of a round trip is small beside it, short enough to balance well.
constexpr double kTargetChunkSeconds = 0.5e-3;
// While a caller drives progress, or shortly after anything happened, the dispatcher thread looks
// again this often (a caller may have left work in flight and gone on computing); after
// kQuietBeforeSleep of nothing it sleeps until told.
constexpr auto kLookAgain = 1ms;
constexpr auto kQuietBeforeSleep = 100ms;

// Set while this thread holds the dispatcher's progress_mutex_ (which is not recursive): the
// dispatcher's own work must not wait on a job by driving, nor take the lock again.
thread_local bool t_holds_progress = false;

class ProgressLock {
 public:
  explicit ProgressLock(std::mutex& mutex) : lock_(mutex) { t_holds_progress = true; }
  ProgressLock(std::mutex& mutex, std::try_to_lock_t) : lock_(mutex, std::try_to_lock) {
    if (lock_) t_holds_progress = true;
  }
  ~ProgressLock() {
    if (lock_) t_holds_progress = false;
  }
  ProgressLock(const ProgressLock&) = delete;
  ProgressLock& operator=(const ProgressLock&) = delete;
  explicit operator bool() const { return lock_.owns_lock(); }
  void unlock() {
    lock_.unlock();
    t_holds_progress = false;
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

template <class T>
std::span<const char> bytes_of(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof value};
}

std::uint64_t failpoint(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::strtoull(value, nullptr, 10) : 0;
}

double seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

std::string where(const WorkerInfo& worker) {
  return fmt::format("worker {} on {}, pid {}", worker.id, worker.host, worker.pid);
}

}  // namespace

Dispatcher::Dispatcher(std::vector<std::string> worker_argv)
    : worker_argv_(std::move(worker_argv)),
      executable_(std::filesystem::read_symlink("/proc/self/exe").string()),
      break_after_results_(failpoint("FIBER_FAILPOINT_BREAK_AFTER_RESULTS")),
      thread_([this] { loop(); }) {}

Dispatcher::~Dispatcher() {
  {
    std::lock_guard lock(inbox_mutex_);
    stopping_ = true;
  }
  inbox_changed_.notify_all();
  thread_.join();
}

void Dispatcher::post(std::function<void()> command, bool wake) {
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_.push_back(std::move(command));
    inbox_filled_.store(true, std::memory_order_release);
  }
  if (wake) inbox_changed_.notify_one();
}

void Dispatcher::wake_if_asleep() {
  if (!asleep_.load()) return;
  {
    std::lock_guard lock(inbox_mutex_);
    unwatched_ = true;
  }
  inbox_changed_.notify_one();
}

template <class Command>
auto Dispatcher::run_on_dispatcher(Command command) -> decltype(command()) {
  std::packaged_task<decltype(command())()> task(std::move(command));
  auto result = task.get_future();
  post([&task] { task(); });
  return result.get();
}

// --- pools and their workers ---

std::pair<std::shared_ptr<PoolHandle>, Dispatcher::JobsToAwait> Dispatcher::open_pool(
    const PoolOptions& options) {
  return run_on_dispatcher([&] {
    throw_if_broken();
    auto pool = std::make_shared<PoolHandle>(options);
    pool->autoscale_ceiling = options.max_workers;
    pools_.push_back(pool);
    try {
      auto initializers = grow(pool, options.processes);
      return std::pair{pool, initializers};
    } catch (...) {
      shrink(*pool, static_cast<int>(pool->workers.size()));
      std::erase(pools_, pool);
      throw;
    }
  });
}

Dispatcher::JobsToAwait Dispatcher::resize(const std::shared_ptr<PoolHandle>& pool, int processes) {
  return run_on_dispatcher([&] {
    throw_if_broken();
    int now = static_cast<int>(pool->workers.size());
    if (processes > now) return grow(pool, processes - now);
    shrink(*pool, now - processes);
    return JobsToAwait{};
  });
}

Dispatcher::JobsToAwait Dispatcher::grow(const std::shared_ptr<PoolHandle>& pool, int count) {
  JobsToAwait initializers;
  pool->target = static_cast<int>(pool->workers.size()) + count;
  while (static_cast<int>(pool->workers.size()) < pool->target) {
    if (auto job = add_worker(pool)) initializers.push_back(std::move(job));
  }
  return initializers;
}

std::shared_ptr<Job> Dispatcher::add_worker(const std::shared_ptr<PoolHandle>& pool) {
  int id;
  if (!parked_.empty()) {
    id = parked_.back();
    parked_.pop_back();
  } else {
    id = spawn_worker();
  }
  Worker& worker = *workers_[id];
  worker.pool = pool.get();
  worker.parked = false;
  worker.idle_since = Clock::now();
  pool->workers.push_back(id);
  {
    std::lock_guard lock(pool->info_mutex);
    pool->worker_infos.push_back(worker.info);
  }
  parked_count_.store(static_cast<int>(parked_.size()));
  std::shared_ptr<Job> initializer;
  if (pool->options.initializer) {
    initializer = send_call(worker, pool, *pool->options.initializer, kRunInitializer);
  }
  for (const Call& call : pool->broadcasts) send_call(worker, pool, call, kRunBroadcast);
  return initializer;
}

std::shared_ptr<Job> Dispatcher::send_call(Worker& worker, const std::shared_ptr<PoolHandle>& pool,
                                           const Call& call, std::uint32_t flags) {
  auto job = std::make_shared<Job>(call.task, call.arguments,
                                   std::vector<std::uint64_t>{0, call.arguments.size()}, 1);
  job->drive_with(this);
  job->next_unsent = 1;
  send_chunk(worker, pool, job, 0, 1, flags);
  return job;
}

Dispatcher::JobsToAwait Dispatcher::broadcast(const std::shared_ptr<PoolHandle>& pool,
                                              const Call& call) {
  return run_on_dispatcher([&] {
    throw_if_broken();
    auto same = std::find_if(pool->broadcasts.begin(), pool->broadcasts.end(),
                             [&](const Call& c) { return c.task == call.task; });
    if (same != pool->broadcasts.end()) {
      *same = call;
    } else {
      pool->broadcasts.push_back(call);
    }
    JobsToAwait jobs;
    for (int id : pool->workers) {
      jobs.push_back(send_call(*workers_[id], pool, call, kRunBroadcast));
    }
    return jobs;
  });
}

void Dispatcher::shrink(PoolHandle& pool, int count) {
  // Idle workers first, then those with the least in flight: their work finishes, then they
  // park.
  for (; count > 0 && !pool.workers.empty(); --count) {
    auto least_busy = std::min_element(pool.workers.begin(), pool.workers.end(), [&](int a, int b) {
      return workers_[a]->in_flight.size() < workers_[b]->in_flight.size();
    });
    remove_from_pool(*least_busy);
  }
  pool.target = static_cast<int>(pool.workers.size());
}

void Dispatcher::remove_from_pool(int worker_id) {
  Worker& worker = *workers_[worker_id];
  PoolHandle* pool = worker.pool;
  if (!pool) return;
  std::erase(pool->workers, worker_id);
  {
    std::lock_guard lock(pool->info_mutex);
    std::erase_if(pool->worker_infos, [&](const WorkerInfo& w) { return w.id == worker_id; });
  }
  worker.pool = nullptr;
  park_if_drained(worker_id);
}

void Dispatcher::park_if_drained(int worker_id) {
  Worker& worker = *workers_[worker_id];
  if (worker.pool || worker.dead || worker.parked || !worker.in_flight.empty()) return;
  worker.parked = true;
  worker.channel.send(MessageKind::park);
  parked_.push_back(worker_id);
  parked_count_.store(static_cast<int>(parked_.size()));
}

void Dispatcher::submit(const std::shared_ptr<PoolHandle>& pool, std::shared_ptr<Job> job) {
  job->drive_with(this);
  auto queue = [this, pool, job = std::move(job)] {
    if (job->size() == 0) return;
    if (broken_) {
      job->fail_pending(broken_);
      return;
    }
    pool->queue.push_back(job);
  };
  if (t_holds_progress) {  // from the dispatcher's own work: next round
    post(std::move(queue));
    return;
  }
  ProgressLock progress(progress_mutex_, std::try_to_lock);
  if (!progress) {  // the dispatcher is at work: it takes the job in its next round
    post(std::move(queue));
    return;
  }
  // Nobody is dispatching: send it from this thread now (behind the commands already posted).
  // Without listening to the workers: a receive test that finds nothing gives the core away
  // (yield_when_idle), and a caller submitting a round of tasks would give it away once per task
  // before the last one is sent. Whoever waits for the results listens.
  post(std::move(queue), /*wake=*/false);
  step(Listen::no);
  progress.unlock();
  wake_if_asleep();
}

void Dispatcher::terminate(const std::shared_ptr<PoolHandle>& pool) {
  run_on_dispatcher([&] {
    pool->terminated = true;
    auto error = std::make_exception_ptr(
        PoolClosed("fiber: the pool was terminated before this task finished"));
    for (auto& job : pool->queue) job->fail_pending(error);
    pool->queue.clear();
    for (int id : pool->workers) {
      Worker& worker = *workers_[id];
      for (auto& chunk : worker.in_flight) chunk.job->fail_pending(error);
      if (!worker.in_flight.empty()) worker.channel.send(MessageKind::drop);
    }
  });
}

void Dispatcher::release(const std::shared_ptr<PoolHandle>& pool) {
  run_on_dispatcher([&] {
    pool->released = true;
    shrink(*pool, static_cast<int>(pool->workers.size()));
    std::erase(pools_, pool);
  });
}

int Dispatcher::spawn_worker() {
  int id = static_cast<int>(workers_.size());
  // Without oversubscription, check the slots first: after a spawn that failed for want of
  // slots, Open MPI 4.1's mpirun never exits (docs/platform.md, "Slots and oversubscription").
  // (A singleton reports a universe of 1; there MPI itself says no.)
  int* universe = nullptr;
  int found = 0;
  mpi::check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &found),
             "MPI_Comm_get_attr");
  int live = 1 + static_cast<int>(std::count_if(workers_.begin(), workers_.end(),
                                                [](const auto& w) { return !w->dead; }));
  if (!oversubscription_allowed() && found && *universe > 1 && live + 1 > *universe) {
    throw SpawnError(fmt::format(
        "fiber: cannot start worker {}: the job has {} slots and {} are taken (the master and {} "
        "workers); ask for fewer processes, a larger allocation, or set FIBER_OVERSUBSCRIBE=1",
        id, *universe, live, live - 1));
  }
  std::vector<char*> argv;
  for (const auto& argument : worker_argv_) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  mpi::Info info;
  if (oversubscription_allowed()) info.set("map_by", ":OVERSUBSCRIBE");
  MPI_Comm comm = MPI_COMM_NULL;
  int spawn_error = MPI_SUCCESS;
  int rc = MPI_Comm_spawn(executable_.c_str(), argv.data(), 1, info.get(), 0, MPI_COMM_SELF, &comm,
                          &spawn_error);
  if (rc != MPI_SUCCESS || spawn_error != MPI_SUCCESS) {
    throw SpawnError(fmt::format(
        "fiber: could not start worker {} ({}); {}", id,
        mpi::error_text(rc != MPI_SUCCESS ? rc : spawn_error),
        oversubscription_allowed()
            ? "check that the program exists on every node"
            : "the allocation has no free slot: ask for fewer processes, a larger allocation, "
              "or set FIBER_OVERSUBSCRIBE=1"));
  }
  auto worker = std::make_unique<Worker>(comm);
  // An error on this worker's requests must come back as a return code (then it is this worker's
  // loss), not end the master (MPI's default handler).
  mpi::check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Request request = MPI_REQUEST_NULL;
  worker->channel.post_receive(&request);
  auto deadline = Clock::now() + kHelloTimeout;
  Backoff backoff(1ms, 1ms);
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    if (!worker->channel.failure()) {
      int test_rc = MPI_Test(&request, &arrived, &status);
      if (test_rc != MPI_SUCCESS) worker->channel.fail(mpi::error_text(test_rc));
    }
    if (auto failure = worker->channel.failure()) {
      worker->comm.release();  // it may be gone: a disconnect could wait forever
      throw SpawnError(
          fmt::format("fiber: worker {} started but could not be reached: {}", id, *failure));
    }
    if (arrived) {
      auto hello = worker->channel.on_received(status, &request);
      if (hello) {
        BodyReader reader(hello->body);
        worker->info.pid = static_cast<long>(reader.raw<std::int64_t>());
        worker->info.host = reader.string();
        worker->info.id = id;
        break;
      }
      continue;
    }
    if (Clock::now() > deadline) {
      throw SpawnError(fmt::format("fiber: worker {} started but did not report within {} s", id,
                                   seconds(kHelloTimeout)));
    }
    backoff.pause();
  }
  Bytes welcome;
  append_raw(welcome, static_cast<std::int32_t>(id));
  append_string(welcome, run_identity());
  worker->channel.send(MessageKind::welcome, {welcome});
  worker->channel.post_receive(&request);
  worker->last_heard = Clock::now();
  workers_.push_back(std::move(worker));
  receives_.push_back(request);
  worker_count_.store(static_cast<int>(workers_.size()));
  return id;
}

// --- sending work ---

void Dispatcher::send_chunk(Worker& worker, const std::shared_ptr<PoolHandle>& pool,
                            const std::shared_ptr<Job>& job, std::size_t first, std::size_t count,
                            std::uint32_t flags, Batch* batch) {
  std::uint64_t chunk_id = next_chunk_id_++;
  bool isolated = pool->options.isolation == Isolation::process;
  auto timeout = job->timeout().count() > 0 ? job->timeout() : pool->options.task_timeout;
  RunHeader header{chunk_id, static_cast<std::uint32_t>(job->task().size()),
                   static_cast<std::uint32_t>(count), flags | (isolated ? kRunIsolated : 0u),
                   static_cast<std::uint32_t>(timeout.count())};
  auto offsets = job->offsets(first, count);
  auto& relative = scratch_offsets_;
  relative.resize(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) relative[i] = offsets[i] - offsets[0];
  std::span<const char> name(job->task().data(), job->task().size());
  std::span<const char> offset_bytes(reinterpret_cast<const char*>(relative.data()),
                                     relative.size() * sizeof(std::uint64_t));
  auto arguments = job->arguments(first, count);
  if (batch && arguments.size() <= kBatchedEntryBytes) {  // joins the worker's batch
    batch->add({bytes_of(header), name, offset_bytes, arguments});
  } else {
    // Alone, as a list of one entry; the arguments are sent in place (the job stays alive).
    std::uint64_t size = sizeof header + name.size() + offset_bytes.size() + arguments.size();
    worker.channel.send(MessageKind::run,
                        {bytes_of(size), bytes_of(header), name, offset_bytes, arguments}, job);
  }
  // A worker that had nothing to do had no reason to talk: its silence starts now.
  if (worker.in_flight.empty()) worker.last_heard = now_;
  worker.in_flight.push_back({chunk_id, job, pool, first, count});
}

const Dispatcher::TaskTiming* Dispatcher::timing_of(const Job& job) const {
  // Consecutive chunks are of the same task: remember its entry (map entries do not move), and
  // compare names rather than hash one.
  if (!last_timing_ || last_timing_->first != job.task()) {
    auto found = timings_.find(job.task());
    if (found == timings_.end()) return nullptr;
    last_timing_ = &*found;
  }
  return last_timing_->second.measured ? &last_timing_->second : nullptr;
}

std::size_t Dispatcher::chunk_size(const PoolHandle& pool, const Job& job) const {
  std::size_t remaining = job.size() - job.next_unsent;
  if (job.chunksize() > 0) return std::min(job.chunksize(), remaining);
  const TaskTiming* timing = timing_of(job);
  if (!timing) return 1;  // probe the cost first
  // Guided: never more than half of a fair share of what is left, so the tail stays balanced.
  std::size_t workers = std::max<std::size_t>(1, pool.workers.size());
  std::size_t guided = std::max<std::size_t>(1, remaining / (2 * workers));
  double per_item = std::max(timing->seconds_per_item, 1e-9);
  auto by_time = static_cast<std::size_t>(std::max(1.0, kTargetChunkSeconds / per_item));
  return std::min({by_time, guided, remaining});
}

std::size_t Dispatcher::in_flight_limit(const Job& job, std::size_t chunk) const {
  // Chunks queued behind the running one hide the round trip, but a worker must never hold work
  // that another could start: only short chunks (measured) are queued, about 200 us of work at
  // most, so tiny tasks get a deep pipeline. Long ones go one at a time, the round trip small
  // beside them.
  const TaskTiming* timing = timing_of(job);
  if (!timing) return 1;
  double chunk_seconds = timing->seconds_per_item * static_cast<double>(chunk);
  if (chunk_seconds >= 2e-3) return 1;
  return static_cast<std::size_t>(std::clamp(200e-6 / std::max(chunk_seconds, 1e-9), 2.0, 64.0));
}

bool Dispatcher::dispatch() {
  bool sent = false;
  for (auto& pool : pools_) {
    if (pool->terminated) continue;
    // Two passes: first every worker with nothing to do gets a chunk, then queues fill up.
    for (int pass = 0; pass < 2 && !pool->queue.empty(); ++pass) {
      for (int id : pool->workers) {
        Worker& worker = *workers_[id];
        Batch batch(MessageKind::run);
        while (!pool->queue.empty() && !batch.full()) {
          auto job = pool->queue.front();
          std::size_t first, count;
          if (!job->requeued.empty()) {
            std::tie(first, count) = job->requeued.front();
          } else {
            first = job->next_unsent;
            count = chunk_size(*pool, *job);
          }
          // Prefetch only for a worker that answered just now: one stuck in a long item must
          // not collect work that another could start.
          bool answering = now_ - worker.last_result < 1ms;
          std::size_t limit = pass == 0 || !answering ? 1 : in_flight_limit(*job, count);
          if (worker.in_flight.size() >= limit) break;
          if (!job->requeued.empty()) {
            count = std::min(count, std::max<std::size_t>(1, chunk_size(*pool, *job)));
            auto& range = job->requeued.front();
            range.first += count;
            range.second -= count;
            if (range.second == 0) job->requeued.pop_front();
          } else {
            job->next_unsent += count;
          }
          if (!job->has_unsent()) pool->queue.pop_front();
          send_chunk(worker, pool, job, first, count, 0, &batch);
          sent = true;
        }
        batch.send(worker.channel);
      }
    }
  }
  return sent;
}

// --- receiving ---

bool Dispatcher::poll_workers() {
  if (receives_.empty()) return false;
  bool any = false;
  static thread_local std::vector<int> indices;
  static thread_local std::vector<MPI_Status> statuses;
  indices.resize(receives_.size());
  statuses.resize(receives_.size());
  int completed = 0;
  int rc = MPI_Testsome(static_cast<int>(receives_.size()), receives_.data(), &completed,
                        indices.data(), statuses.data());
  // A receive that completed in error (its worker died mid-message, its connection broke) is
  // that worker's failure alone; the statuses say which (and only with MPI_ERR_IN_STATUS).
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    throw Error("fiber: MPI_Testsome failed: " + mpi::error_text(rc));
  }
  if (completed == MPI_UNDEFINED) return false;
  // Every completed receive is taken (and posted again) even if one of them fails the dispatcher:
  // a request left completed would silence its worker for good.
  std::exception_ptr failure;
  for (int k = 0; k < completed; ++k) {
    int id = indices[k];
    Worker& worker = *workers_[id];
    any = true;
    if (rc == MPI_ERR_IN_STATUS && statuses[k].MPI_ERROR != MPI_SUCCESS) {
      receives_[id] = MPI_REQUEST_NULL;
      worker.channel.fail("a receive from it failed: " + mpi::error_text(statuses[k].MPI_ERROR));
      continue;
    }
    try {
      take_message(id, statuses[k]);
    } catch (const ProtocolError& error) {
      receives_[id] = MPI_REQUEST_NULL;
      worker.channel.fail(fmt::format("it sent a message fiber cannot read ({})", error.what()));
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  for (auto& worker : workers_) {
    if (!worker->dead) worker->channel.progress_sends();
  }
  if (failure) std::rethrow_exception(failure);
  return any;
}

void Dispatcher::take_message(int id, const MPI_Status& status) {
  Worker& worker = *workers_[id];
  auto message = worker.channel.on_received(status, &receives_[id]);
  if (!message) return;
  worker.channel.post_receive(&receives_[id]);
  if (worker.unreachable) return;  // lost for good (its channel failed): never revived
  worker.last_heard = now_;
  if (worker.dead) {
    revive(id);
    return;
  }
  if (message->kind == MessageKind::result) {
    auto list = std::make_shared<const Bytes>(std::move(message->body));
    for_each_entry(*list, [&](std::span<const char> result) { on_result(worker, list, result); });
    park_if_drained(id);
  }
}

bool Dispatcher::lose_failed_workers() {
  // Failures are rare: the workers are looked through only when a channel failed since last time.
  std::uint64_t failures = Channel::failures_so_far();
  if (failures == failures_handled_) return false;
  failures_handled_ = failures;
  bool any = false;
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    Worker& worker = *workers_[id];
    if (worker.unreachable || !worker.channel.failure()) continue;
    worker.unreachable = true;
    any = true;
    std::string why = fmt::format("{}: {}", where(worker.info), *worker.channel.failure());
    if (worker.dead) {  // already given up for silence: nothing more to re-send
      std::fprintf(stderr, "fiber: %s\n", why.c_str());
      continue;
    }
    declare_dead(static_cast<int>(id), why);
  }
  return any;
}

void Dispatcher::on_result(Worker& worker, const std::shared_ptr<const Bytes>& message,
                           std::span<const char> body) {
  BodyReader reader(body);
  auto header = reader.raw<ResultHeader>();
  // Item results are kept as spans of the whole message: offsets from its start.
  auto base = static_cast<std::uint64_t>(body.data() - message->data());
  auto chunk = std::find_if(worker.in_flight.begin(), worker.in_flight.end(),
                            [&](const InFlight& c) { return c.chunk_id == header.chunk_id; });
  if (chunk == worker.in_flight.end()) {
    if (header.chunk_id < worker.stale_chunks_below) return;  // re-sent when it was lost
    throw ProtocolError(
        fmt::format("fiber: {} answered a chunk it was not given", where(worker.info)));
  }
  if (++results_taken_ == break_after_results_) {
    throw Error("fiber: failpoint FIBER_FAILPOINT_BREAK_AFTER_RESULTS reached");
  }
  InFlight done = std::move(*chunk);
  worker.in_flight.erase(chunk);
  worker.last_result = now_;
  if (worker.in_flight.empty()) worker.idle_since = worker.last_result;
  if (header.status == ChunkStatus::cancelled) return;  // failed when the pool was terminated
  if (header.status == ChunkStatus::not_run) {
    requeue(done, done.first, done.count);
    return;
  }

  if (header.count > 0 && header.status == ChunkStatus::complete) {
    auto& timing = timings_[done.job->task()];
    double per_item = static_cast<double>(header.elapsed_ns) * 1e-9 / header.count;
    timing.seconds_per_item =
        timing.measured ? 0.8 * timing.seconds_per_item + 0.2 * per_item : per_item;
    timing.measured = true;
  }

  auto& results = scratch_results_;
  results.assign(header.count, Job::ItemResult{});
  std::uint64_t failed = 0;
  for (auto& result : results) {
    auto status = reader.raw<ItemStatus>();
    result.ok = status.ok != 0;
    result.offset = base + reader.position();
    result.size = status.size;
    auto bytes = reader.take(status.size);
    if (!result.ok) {
      ++failed;
      BodyReader error(bytes);
      std::string type = error.string();
      std::string what = error.string();
      result.error = std::make_exception_ptr(TaskError(done.job->task(), type, what, worker.info));
    }
  }
  done.pool->counters.completed += header.count;
  done.pool->counters.failed += failed;
  done.job->store(done.first, results, message);

  if (header.status == ChunkStatus::crashed || header.status == ChunkStatus::timed_out) {
    std::string reason = reader.string();
    // Items from header.count on have no result: the one the task process died running is
    // counted against its retries, the others are sent again.
    std::size_t item = done.first + header.failed_item;
    requeue(done, done.first + header.count, header.failed_item - header.count);
    std::exception_ptr error;
    if (header.status == ChunkStatus::crashed) {
      ++done.pool->counters.crashes;
      error = std::make_exception_ptr(WorkerLost(fmt::format(
          "fiber: task '{}' crashed its task process {} times, the last time on {}: {}",
          done.job->task(), done.pool->options.max_retries + 1, where(worker.info), reason)));
    } else {
      ++done.pool->counters.timeouts;
      error = std::make_exception_ptr(TimeoutError(fmt::format(
          "fiber: task '{}' timed out {} times, the last time on {}: {}", done.job->task(),
          done.pool->options.max_retries + 1, where(worker.info), reason)));
    }
    retry_or_fail(done, item, error);
    requeue(done, item + 1, done.first + done.count - item - 1);
  }
}

void Dispatcher::retry_or_fail(const InFlight& chunk, std::size_t item,
                               const std::exception_ptr& error) {
  int& failures = chunk.job->failed_attempts[item];
  if (++failures > chunk.pool->options.max_retries) {
    ++chunk.pool->counters.completed;
    ++chunk.pool->counters.failed;
    Job::ItemResult failure{false, 0, 0, error};
    chunk.job->store(item, std::span(&failure, 1), nullptr);
    return;
  }
  ++chunk.pool->counters.retried;
  requeue(chunk, item, 1);
}

void Dispatcher::requeue(const InFlight& chunk, std::size_t first, std::size_t count) {
  if (count == 0) return;
  PoolHandle& pool = *chunk.pool;
  if (pool.terminated || pool.released) {
    chunk.job->fail_pending(std::make_exception_ptr(
        PoolClosed("fiber: the pool ended before this task could be run again")));
    return;
  }
  bool queued = chunk.job->has_unsent();
  chunk.job->requeued.emplace_back(first, count);
  if (!queued) pool.queue.push_front(chunk.job);  // retries go first
}

// --- failures of whole workers ---

void Dispatcher::check_deadlines() {
  auto now = Clock::now();
  auto gap = now - last_deadline_check_;
  if (gap < 100ms) return;
  bool first_check = last_deadline_check_ == Clock::time_point{};
  last_deadline_check_ = now;
  // The dispatcher itself did not run for a while (a long spawn, an overloaded node): nobody was
  // listened to meanwhile, so that time is nobody's silence.
  if (!first_check && gap > 1s) {
    for (auto& worker : workers_) worker->last_heard = std::min(now, worker->last_heard + gap);
  }
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    Worker& worker = *workers_[id];
    if (worker.dead || worker.in_flight.empty()) continue;
    const InFlight& oldest = worker.in_flight.front();
    // A worker running tasks in its own process cannot send heartbeats meanwhile.
    if (oldest.pool->options.isolation != Isolation::process) continue;
    const auto base_timeout = oldest.pool->options.worker_timeout;
    auto timeout = base_timeout * silence_scale_;
    if (silence_scale_ > 1 && now - last_loss_ > kCalmAfterLosses * base_timeout) {
      silence_scale_ = 1;
      timeout = base_timeout;
    }
    auto silence = now - worker.last_heard;
    if (silence > timeout) {
      declare_dead(static_cast<int>(id), fmt::format("{} stopped answering for {:.1f} s",
                                                     where(worker.info), seconds(silence)));
      // (Workers found silent in the same round, e.g. those of one lost node, are one event.)
      bool soon_after_a_loss =
          last_loss_ != Clock::time_point{} && now != last_loss_ && now - last_loss_ < 3 * timeout;
      if (soon_after_a_loss && silence_scale_ < kMaxSilenceScale) {
        silence_scale_ *= 2;
        fmt::print(stderr,
                   "fiber: workers keep falling silent (an overloaded node?); a worker is now "
                   "taken for lost after {:.0f} s of silence\n",
                   seconds(base_timeout * silence_scale_));
      }
      last_loss_ = now;
    }
  }
}

void Dispatcher::declare_dead(int worker_id, const std::string& why) {
  Worker& worker = *workers_[worker_id];
  worker.dead = true;
  // MPI reports nothing about a dead process (docs/platform.md, "MPI does not report a dead
  // process"): send it nothing more. Its connection stays ("Disconnecting from a dead process
  // hangs") and its receive stays posted: a worker that was only starved (an overloaded node)
  // answers again and is revived.
  std::shared_ptr<PoolHandle> pool;
  auto in_flight = std::move(worker.in_flight);
  worker.in_flight.clear();
  for (auto& chunk : in_flight) {
    pool = chunk.pool;
    // Which item of the chunk killed it is unknown: the first is counted, the rest re-sent.
    auto error = std::make_exception_ptr(WorkerLost(
        fmt::format("fiber: task '{}' was running when its worker was lost {} times; the last: {}",
                    chunk.job->task(), chunk.pool->options.max_retries + 1, why)));
    retry_or_fail(chunk, chunk.first, error);
    requeue(chunk, chunk.first + 1, chunk.count - 1);
  }
  if (worker.pool) {
    PoolHandle* holder = worker.pool;
    ++holder->counters.workers_lost;
    int target = holder->target;
    remove_from_pool(worker_id);
    holder->target = target;
    // Restore the pool's size with a parked or new worker.
    for (auto& candidate : pools_) {
      if (candidate.get() == holder && !holder->terminated) {
        try {
          add_worker(candidate);
        } catch (const Error& error) {
          std::fprintf(stderr, "fiber: could not replace a lost worker: %s\n", error.what());
        }
      }
    }
  }
  std::fprintf(stderr, "fiber: %s; its tasks go to other workers\n", why.c_str());
}

void Dispatcher::revive(int worker_id) {
  Worker& worker = *workers_[worker_id];
  worker.dead = false;
  worker.stale_chunks_below = next_chunk_id_;
  worker.channel.send(MessageKind::drop);  // its chunks were re-sent to others
  fmt::print(stderr, "fiber: {} answered again after being taken for lost; it waits parked\n",
             where(worker.info));
  park_if_drained(worker_id);
}

void Dispatcher::autoscale() {
  auto now = Clock::now();
  for (auto& pool : pools_) {
    if (pool->autoscale_ceiling <= 0 || pool->terminated) continue;
    const auto& options = pool->options;
    int size = static_cast<int>(pool->workers.size());
    std::size_t backlog = 0;
    for (const auto& job : pool->queue) {
      backlog += job->size() - job->next_unsent;
      for (const auto& range : job->requeued) backlog += range.second;
    }
    if (backlog > 0 && size < pool->autoscale_ceiling) {
      int wanted = std::min<int>(pool->autoscale_ceiling, size + static_cast<int>(backlog));
      try {
        grow(pool, wanted - size);
      } catch (const SpawnError& error) {
        pool->autoscale_ceiling = static_cast<int>(pool->workers.size());
        pool->target = pool->autoscale_ceiling;
        std::fprintf(stderr, "fiber: autoscaling stops at %d workers: %s\n",
                     pool->autoscale_ceiling, error.what());
      }
      continue;
    }
    if (backlog == 0 && size > options.min_workers) {
      for (int id : std::vector<int>(pool->workers)) {
        Worker& worker = *workers_[id];
        if (static_cast<int>(pool->workers.size()) <= options.min_workers) break;
        if (worker.in_flight.empty() && now - worker.idle_since > options.scale_down_after) {
          remove_from_pool(id);
          pool->target = static_cast<int>(pool->workers.size());
        }
      }
    }
  }
}

// --- the loop ---

bool Dispatcher::work_in_flight() const {
  for (const auto& worker : workers_) {
    if (!worker->in_flight.empty()) return true;
  }
  for (const auto& pool : pools_) {
    if (!pool->queue.empty()) return true;
  }
  return false;
}

bool Dispatcher::must_poll() const {
  return work_in_flight() || std::any_of(pools_.begin(), pools_.end(), [](const auto& pool) {
           return pool->autoscale_ceiling > 0;
         });
}

bool Dispatcher::step(Listen listen) {
  try {
    return step_once(listen);
  } catch (...) {
    break_down(std::current_exception());
    return true;
  }
}

bool Dispatcher::step_once(Listen listen) {
  std::vector<std::function<void()>> commands;
  if (inbox_filled_.load(std::memory_order_acquire)) {
    std::lock_guard lock(inbox_mutex_);
    commands.swap(inbox_);
    inbox_filled_.store(false, std::memory_order_relaxed);
  }
  now_ = Clock::now();
  for (auto& command : commands) command();
  bool active = !commands.empty();
  if (broken_) return active;  // commands fail at once; workers are not polled any more
  if (listen == Listen::to_workers) active |= poll_workers();
  active |= lose_failed_workers();
  autoscale();
  active |= dispatch();
  active |= lose_failed_workers();  // a send may have failed
  check_deadlines();
  if (active) last_activity_ = now_;
  return active;
}

bool Dispatcher::drive(const std::function<bool()>& ready,
                       std::optional<Clock::time_point> deadline) {
  if (t_holds_progress) return false;
  // Work it leaves in flight is the dispatcher thread's again within kLookAgain.
  struct Driving {
    std::atomic<int>& drivers;
    explicit Driving(std::atomic<int>& count) : drivers(count) { drivers.fetch_add(1); }
    ~Driving() { drivers.fetch_sub(1); }
  } driving(drivers_);
  Backoff backoff(10ms, 1ms);
  while (!ready()) {
    if (deadline && Clock::now() >= *deadline) break;
    bool active = false;
    {
      ProgressLock progress(progress_mutex_, std::try_to_lock);
      if (progress) active = step();
    }
    if (active) {
      backoff.activity();
    } else {
      backoff.pause();
    }
  }
  return true;
}

void Dispatcher::loop() {
  Backoff backoff(10ms, 1ms);
  for (;;) {
    {
      std::unique_lock lock(inbox_mutex_);
      while (drivers_.load() > 0 && !stopping_) inbox_changed_.wait_for(lock, kLookAgain);
      if (stopping_) break;
    }
    ProgressLock progress(progress_mutex_);
    if (drivers_.load() > 0) continue;
    if (step()) {
      backoff.activity();
      continue;
    }
    if (must_poll()) {
      progress.unlock();
      backoff.pause();
      continue;
    }
    // Nothing to poll for: wait for a command, looking again now and then while things happen
    // (a caller that submitted from its own thread wakes the dispatcher thread only once it
    // sleeps until told).
    bool quiet = now_ - last_activity_ > kQuietBeforeSleep;
    if (quiet) asleep_.store(true);
    progress.unlock();
    std::unique_lock lock(inbox_mutex_);
    auto told = [this] { return !inbox_.empty() || unwatched_ || stopping_; };
    if (quiet) {
      inbox_changed_.wait(lock, told);
    } else {
      inbox_changed_.wait_for(lock, kLookAgain, told);
    }
    unwatched_ = false;
    asleep_.store(false);
  }
  ProgressLock progress(progress_mutex_);
  step();  // commands posted before the stop
  shutdown_workers();
}

void Dispatcher::break_down(const std::exception_ptr& cause) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(cause);
  } catch (const std::exception& error) {
    what = error.what();
  } catch (...) {
  }
  std::fprintf(stderr, "fiber: the runtime broke down and fails all pending work: %s\n",
               what.c_str());
  broken_ = std::make_exception_ptr(
      Error("fiber: the runtime broke down and takes no more work (" + what + ")"));
  for (auto& pool : pools_) {
    for (auto& job : pool->queue) job->fail_pending(broken_);
    pool->queue.clear();
  }
  // What the dispatcher knew of the chunks in flight may be wrong now (it failed mid-way): the
  // workers drop them, and their answers, if any come, are ignored.
  for (auto& worker : workers_) {
    for (auto& chunk : worker->in_flight) chunk.job->fail_pending(broken_);
    if (!worker->in_flight.empty() && !worker->dead) worker->channel.send(MessageKind::drop);
    worker->in_flight.clear();
    worker->stale_chunks_below = next_chunk_id_;
  }
}

void Dispatcher::throw_if_broken() const {
  if (broken_) std::rethrow_exception(broken_);
}

void Dispatcher::shutdown_workers() {
  try {
    stop_workers();
  } catch (const std::exception& error) {
    // Nothing is waited for any more: a disconnect could wait forever on a broken connection.
    std::fprintf(stderr, "fiber: workers could not be shut down cleanly: %s\n", error.what());
    for (auto& worker : workers_) worker->comm.release();
  }
  workers_.clear();
}

void Dispatcher::stop_workers() {
  // Let chunks still running finish or be dropped, so that no send is left half-done when the
  // processes disconnect.
  auto error = std::make_exception_ptr(Error("fiber: the runtime stopped before this task ran"));
  for (auto& pool : pools_) {
    pool->terminated = true;
    for (auto& job : pool->queue) job->fail_pending(error);
    pool->queue.clear();
  }
  for (auto& worker : workers_) {
    if (worker->dead) continue;
    for (auto& chunk : worker->in_flight) chunk.job->fail_pending(error);
    if (!worker->in_flight.empty()) worker->channel.send(MessageKind::drop);
  }
  Backoff backoff(10ms, 1ms);
  while (work_in_flight()) {
    now_ = Clock::now();
    bool active = poll_workers();
    active |= lose_failed_workers();
    if (active) {
      backoff.activity();
    } else {
      backoff.pause();
    }
    check_deadlines();
  }
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    Worker& worker = *workers_[id];
    if (receives_[id] != MPI_REQUEST_NULL) {
      mpi::check(MPI_Cancel(&receives_[id]), "MPI_Cancel");
      if (worker.dead) {  // never waited for: its process may be gone
        mpi::check(MPI_Request_free(&receives_[id]), "MPI_Request_free");
      } else {
        mpi::check(MPI_Wait(&receives_[id], MPI_STATUS_IGNORE), "MPI_Wait");
      }
    }
    // Also to a worker taken for lost that may only have been starved: alive, it ends (MPI_Finalize
    // would wait for it); dead, the message is never waited for.
    worker.channel.send(MessageKind::shutdown);
  }
  for (auto& worker : workers_) {
    if (!worker->dead) worker->channel.wait_sends();
    if (worker->dead || worker->channel.failure()) {
      worker->comm.release();  // disconnecting from a dead process would hang
      continue;
    }
    worker->comm.disconnect();
  }
}

}  // namespace fiber::detail
