#include "dispatch/dispatcher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "backoff.hpp"
#include "dispatch/result_reader.hpp"
#include "fiber/errors.hpp"
#include "log.hpp"
#include "trace/hop_trace.hpp"
#include "wire/entry_list.hpp"
#include "wire/exit_status.hpp"
#include "wire/protocol_error.hpp"

namespace fiber::detail {
namespace {

// How the wait for the last answers polls at the end (backoff.hpp).
constexpr auto kShutdownSpin = std::chrono::milliseconds(10);
constexpr auto kShutdownMaxSleep = std::chrono::milliseconds(1);
// How often waiting replacements look whether a node is still in doubt (a look reads every
// worker's record).
constexpr auto kReplacementRetryPeriod = std::chrono::milliseconds(100);

std::uint64_t failpoint(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::strtoull(value, nullptr, 10) : 0;
}

}  // namespace

Dispatcher::Dispatcher(std::vector<std::string> worker_argv, std::string worker_program)
    : workers_(WorkerSpawner(std::move(worker_argv), std::move(worker_program))),
      break_after_results_(failpoint("FIBER_FAILPOINT_BREAK_AFTER_RESULTS")) {
  engine_.start();
}

Dispatcher::~Dispatcher() { engine_.stop(); }

template <class Command>
auto Dispatcher::command(Command command) -> decltype(command()) {
  return engine_.run([&] {
    throw_if_broken();
    now_ = Clock::now();
    return command();
  });
}

// --- the callers' commands ---

std::pair<std::shared_ptr<PoolHandle>, Dispatcher::JobsToAwait> Dispatcher::open_pool(
    const PoolOptions& options) {
  return command([&] {
    auto pool = std::make_shared<PoolHandle>(options);
    pool->autoscale_ceiling = options.max_workers;
    pools_.push_back(pool);
    take_arrived();
    try {
      auto initializers = sizing_.grow(pool, options.processes);
      return std::pair{pool, initializers};
    } catch (...) {
      sizing_.shrink(*pool, static_cast<int>(pool->workers.size()));
      std::erase(pools_, pool);
      throw;
    }
  });
}

Dispatcher::JobsToAwait Dispatcher::resize(const std::shared_ptr<PoolHandle>& pool, int processes) {
  return command([&] {
    int now = static_cast<int>(pool->workers.size());
    if (processes > now) {
      take_arrived();
      return sizing_.grow(pool, processes - now);
    }
    sizing_.shrink(*pool, now - processes);
    return JobsToAwait{};
  });
}

void Dispatcher::broadcast(const std::shared_ptr<PoolHandle>& pool, const Call& call) {
  command([&] {
    // Encoded once, shared by every worker's job and by the replays for newcomers.
    PoolHandle::SharedCall shared{call.task, std::make_shared<const Bytes>(call.arguments)};
    auto same = std::find_if(pool->broadcasts.begin(), pool->broadcasts.end(),
                             [&](const auto& c) { return c.task == call.task; });
    if (same != pool->broadcasts.end()) {
      *same = shared;
    } else {
      pool->broadcasts.push_back(shared);
    }
    pool->broadcast_failure = nullptr;
    pool->latest_broadcast = pool->submitted;
    std::vector<std::shared_ptr<ScheduledJob>> jobs;
    for (std::size_t i = 0; i < pool->workers.size(); ++i) {
      jobs.push_back(broadcast_job(*pool, shared, &engine_));
    }
    workers_.send_broadcast(pool, jobs, now_);
  });
}

void Dispatcher::submit(const std::shared_ptr<PoolHandle>& pool, std::shared_ptr<Job> job) {
  job->state().drive_with(&engine_);
  // Sent from this thread at once if nobody is dispatching; whoever waits for the results
  // listens for them.
  engine_.run_soon([this, pool, job = std::move(job)] {
    if (job->size() == 0) return;
    if (broken_ || pool->broadcast_failure) {
      job->state().fail_pending(broken_ ? broken_ : pool->broadcast_failure);
      return;
    }
    scheduler_.enqueue(*pool, job);
  });
}

void Dispatcher::terminate(const std::shared_ptr<PoolHandle>& pool) {
  engine_.run([&] { scheduler_.terminate(*pool); });
}

void Dispatcher::release(const std::shared_ptr<PoolHandle>& pool) {
  engine_.run([&] {
    pool->released = true;
    sizing_.shrink(*pool, static_cast<int>(pool->workers.size()));
    std::erase(pools_, pool);
  });
}

void Dispatcher::take_arrived() {
  try {
    workers_.poll(now_, [this](int id, Message& message) { on_message(id, message); });
  } catch (...) {  // as in a round
    fail(std::current_exception());
    throw;
  }
}

// --- a round ---

bool Dispatcher::step(ProgressEngine::Listen listen) {
  if (broken_) return false;  // commands fail at once; workers are not polled any more
  now_ = Clock::now();
  bool active = false;
  if (listen == ProgressEngine::Listen::to_workers) {
    active |= workers_.poll(now_, [this](int id, Message& message) { on_message(id, message); });
  }
  active |= lose_failed_workers();
  sizing_.autoscale(pools_, now_);
  active |= scheduler_.dispatch(pools_, now_);
  active |= lose_failed_workers();  // a send may have failed
  lose_silent_workers();
  return active;
}

bool Dispatcher::work_in_flight() const {
  return workers_.any_in_flight() ||
         std::any_of(pools_.begin(), pools_.end(), [](const auto& p) { return !p->queue.empty(); });
}

bool Dispatcher::must_poll() const {
  return work_in_flight() || std::any_of(pools_.begin(), pools_.end(), [](const auto& pool) {
           return pool->autoscale_ceiling > 0;
         });
}

bool Dispatcher::may_sleep(std::vector<posix::FutexWatch>& watches) {
  return !broken_ && workers_.lanes_may_sleep(watches);
}

void Dispatcher::awake() { workers_.lanes_awake(); }

// --- what workers say ---

void Dispatcher::on_message(int id, Message& message) {
  Worker& worker = workers_[id];
  if (worker.dead) {
    workers_.revive(id);
    sizing_.take_back_parked(pools_);
    return;
  }
  if (message.kind == MessageKind::result) {
    auto list = std::make_shared<const Bytes>(std::move(message.body));
    for_each_entry(*list, [&](std::span<const char> entry) { on_result(worker, list, entry); });
    workers_.park_if_drained(id);
  }
}

void Dispatcher::on_result(Worker& worker, const std::shared_ptr<const Bytes>& message,
                           std::span<const char> entry) {
  // Item results are kept as spans of the whole message: offsets from its start.
  ResultReader result(entry, static_cast<std::uint64_t>(entry.data() - message->data()));
  const ResultHeader& header = result.header();
  hop_trace::mark(hop_trace::Point::master_received, header.chunk_id);
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
    scheduler_.requeue(done, done.first, done.count);
    return;
  }
  JobState& job = done.job->state();
  if (header.status == ChunkStatus::complete) {
    scheduler_.timings().record(job.timed_as(), header.elapsed_ns, header.count);
  }
  std::uint64_t failed = result.items(job.task(), worker.info, scratch_results_);
  done.pool->counters.completed += header.count;
  done.pool->counters.failed += failed;
  // (store() takes the errors)
  auto broadcast_error =
      done.job->broadcast && failed > 0 ? scratch_results_.front().error : nullptr;
  job.store(done.first, scratch_results_, message);
  if (broadcast_error) fail_after_broadcast(*done.pool, *done.job, broadcast_error);

  if (header.status == ChunkStatus::crashed || header.status == ChunkStatus::timed_out) {
    std::string reason = result.reason();
    // Items from header.count on have no result: the one the task process died running is
    // counted against its retries, the others are sent again.
    std::size_t item = done.first + header.failed_item;
    scheduler_.requeue(done, done.first + header.count, header.failed_item - header.count);
    std::exception_ptr error;
    int attempts = done.pool->options.max_retries + 1;
    if (header.status == ChunkStatus::crashed) {
      ++done.pool->counters.crashes;
      error = std::make_exception_ptr(WorkerLost(
          fmt::format("fiber: task '{}' crashed its task process {} times, the last time on {}: {}",
                      job.task(), attempts, where(worker.info), reason),
          exitcode_in(reason)));
    } else {
      ++done.pool->counters.timeouts;
      error = std::make_exception_ptr(
          TimeoutError(fmt::format("fiber: task '{}' timed out {} times, the last time on {}: {}",
                                   job.task(), attempts, where(worker.info), reason)));
    }
    scheduler_.retry_or_fail(done, item, error);
    scheduler_.requeue(done, item + 1, done.first + done.count - item - 1);
  }
}

// A broadcast failed on a worker: what the pool runs after it would see the wrong state there, so
// every job submitted after the broadcast and before the next one fails with its error, and so do
// later ones if no broadcast came since.
void Dispatcher::fail_after_broadcast(PoolHandle& pool, const ScheduledJob& broadcast,
                                      const std::exception_ptr& error) {
  bool latest = broadcast.sequence >= pool.latest_broadcast;
  if (latest && !pool.broadcast_failure) pool.broadcast_failure = error;
  auto later = [&](const ScheduledJob& job) {
    return !job.broadcast && job.sequence > broadcast.sequence &&
           (latest || job.sequence < pool.latest_broadcast);
  };
  std::erase_if(pool.queue, [&](const auto& job) {
    if (!later(*job)) return false;
    job->state().fail_pending(error);
    return true;
  });
  for (int id : pool.workers) {
    for (const auto& chunk : workers_[id].in_flight) {
      if (later(*chunk.job)) chunk.job->state().fail_pending(error);
    }
  }
}

// --- lost workers ---

bool Dispatcher::lose_failed_workers() {
  auto failed = workers_.newly_unreachable();
  for (int id : failed) {
    Worker& worker = workers_[id];
    std::string why = fmt::format("{}: {}", where(worker.info), *worker.channel.failure());
    if (worker.dead) {  // already given up for silence: nothing more to re-send
      log::warn("{}", why);
      continue;
    }
    declare_dead(id, why);
  }
  return !failed.empty();
}

void Dispatcher::lose_silent_workers() {
  for (auto& [id, why] : workers_.newly_silent(Clock::now())) declare_dead(id, why);
  replace_when_no_node_in_doubt();
}

void Dispatcher::replace_when_no_node_in_doubt() {
  if (waiting_replacements_.empty() || now_ - last_replacement_look_ < kReplacementRetryPeriod) {
    return;
  }
  last_replacement_look_ = now_;
  if (workers_.node_in_doubt()) return;
  for (const auto& waiting : std::exchange(waiting_replacements_, {})) {
    if (auto pool = waiting.lock()) sizing_.replace_lost(pool);
  }
}

void Dispatcher::declare_dead(int id, const std::string& why) {
  scheduler_.reschedule_lost(workers_.lose(id), why);
  Worker& worker = workers_[id];
  if (auto pool = worker.pool) {
    ++pool->counters.workers_lost;
    int target = pool->target;
    workers_.leave_pool(id);
    pool->target = target;
    // A spawn while a node may be lost would end the whole job (docs/platform.md, "A lost node
    // forbids spawns"): the replacement waits until a worker there answers.
    if (auto node = workers_.node_in_doubt()) {
      log::warn("the replacement of {} waits until a worker on {} answers (a lost node?)",
                where(worker.info), *node);
      waiting_replacements_.push_back(pool);
    } else {
      sizing_.replace_lost(pool);
    }
  }
  log::warn("{}; its tasks go to other workers", why);
}

// --- failure and the end ---

void Dispatcher::fail(const std::exception_ptr& cause) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(cause);
  } catch (const std::exception& error) {
    what = error.what();
  } catch (...) {
  }
  log::error("the runtime broke down and fails all pending work: {}", what);
  broken_ = std::make_exception_ptr(
      Error("fiber: the runtime broke down and takes no more work (" + what + ")"));
  Scheduler::fail_queued(pools_, broken_);
  // What the dispatcher knew of the chunks in flight may be wrong now (it failed mid-way): the
  // workers drop them, and their answers, if any come, are ignored.
  for (auto& chunk : workers_.abandon_in_flight()) chunk.job->job->state().fail_pending(broken_);
}

void Dispatcher::throw_if_broken() const {
  if (broken_) std::rethrow_exception(broken_);
}

void Dispatcher::finish() {
  try {
    stop_workers();
    workers_.shut_down();
  } catch (const std::exception& error) {
    log::error("workers could not be shut down cleanly: {}", error.what());
    workers_.forget();
  }
}

void Dispatcher::stop_workers() {
  // Let chunks still running finish or be dropped, so that no send is left half-done when the
  // processes disconnect.
  auto error = std::make_exception_ptr(Error("fiber: the runtime stopped before this task ran"));
  for (auto& pool : pools_) pool->terminated = true;
  Scheduler::fail_queued(pools_, error);
  for (const auto& worker : workers_.all()) {
    if (worker->dead) continue;
    for (auto& chunk : worker->in_flight) chunk.job->job->state().fail_pending(error);
    if (!worker->in_flight.empty()) workers_.send(worker->info.id, MessageKind::drop);
  }
  Backoff backoff(kShutdownSpin, kShutdownMaxSleep);
  while (work_in_flight()) {
    now_ = Clock::now();
    bool active =
        workers_.poll(now_, [this](int id, Message& message) { on_message(id, message); });
    active |= lose_failed_workers();
    if (active) {
      backoff.activity();
    } else {
      backoff.pause();
    }
    lose_silent_workers();
  }
}

}  // namespace fiber::detail
