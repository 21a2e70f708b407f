#include "dispatcher.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "backoff.hpp"
#include "fiber/errors.hpp"
#include "launch_defaults.hpp"
#include "mpi/error.hpp"
#include "mpi/info.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// How long a spawned worker may take to say hello before the spawn counts as failed.
constexpr auto kHelloTimeout = 120s;
// A chunk should run about this long when the chunk size is automatic: long enough that the
// per-chunk cost of a round trip is small beside it, short enough to balance well.
constexpr double kTargetChunkSeconds = 0.5e-3;

template <class T>
std::span<const char> bytes_of(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof value};
}

}  // namespace

Dispatcher::Dispatcher(std::vector<std::string> worker_argv)
    : worker_argv_(std::move(worker_argv)),
      executable_(std::filesystem::read_symlink("/proc/self/exe").string()),
      thread_([this] { loop(); }) {}

Dispatcher::~Dispatcher() {
  {
    std::lock_guard lock(inbox_mutex_);
    stopping_ = true;
  }
  inbox_changed_.notify_one();
  thread_.join();
}

void Dispatcher::post(std::function<void()> command) {
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_.push_back(std::move(command));
    inbox_filled_.store(true, std::memory_order_release);
  }
  inbox_changed_.notify_one();
}

template <class Command>
auto Dispatcher::call(Command command) -> decltype(command()) {
  std::packaged_task<decltype(command())()> task(std::move(command));
  auto result = task.get_future();
  post([&task] { task(); });
  return result.get();
}

int Dispatcher::worker_count() const { return worker_count_.load(); }

std::pair<std::shared_ptr<PoolHandle>, std::vector<std::shared_ptr<Job>>> Dispatcher::open_pool(
    const PoolOptions& options) {
  return call([&] {
    auto pool = std::make_shared<PoolHandle>(options);
    std::vector<std::shared_ptr<Job>> initializers;
    try {
      while (static_cast<int>(pool->workers.size()) < options.processes) {
        int id;
        if (!parked_.empty()) {
          id = parked_.back();
          parked_.pop_back();
        } else {
          id = spawn_worker();
        }
        pool->workers.push_back(id);
        workers_[id]->pool = pool.get();
      }
    } catch (...) {
      for (int id : pool->workers) {
        workers_[id]->pool = nullptr;
        parked_.push_back(id);
      }
      throw;
    }
    {
      std::lock_guard lock(pool->info_mutex);
      for (int id : pool->workers) pool->worker_infos.push_back(workers_[id]->info);
    }
    if (options.initializer) {
      for (int id : pool->workers) {
        const Call& init = *options.initializer;
        auto job = std::make_shared<Job>(init.task, init.arguments,
                                         std::vector<std::uint64_t>{0, init.arguments.size()}, 1);
        job->next_unsent = 1;
        send_chunk(*workers_[id], job, 0, 1);
        initializers.push_back(std::move(job));
      }
    }
    pools_.push_back(pool);
    return std::pair{pool, initializers};
  });
}

void Dispatcher::submit(const std::shared_ptr<PoolHandle>& pool, std::shared_ptr<Job> job) {
  post([pool, job = std::move(job)] {
    if (job->size() == 0) return;
    pool->queue.push_back(job);
  });
}

void Dispatcher::terminate(const std::shared_ptr<PoolHandle>& pool) {
  call([&] {
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
  call([&] {
    for (int id : pool->workers) {
      workers_[id]->pool = nullptr;
      return_if_drained(id);
    }
    pool->workers.clear();
    std::erase(pools_, pool);
  });
}

void Dispatcher::return_if_drained(int worker_id) {
  Worker& worker = *workers_[worker_id];
  if (worker.pool == nullptr && worker.in_flight.empty() &&
      std::find(parked_.begin(), parked_.end(), worker_id) == parked_.end()) {
    parked_.push_back(worker_id);
  }
}

int Dispatcher::spawn_worker() {
  int id = static_cast<int>(workers_.size());
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
  MPI_Request request = MPI_REQUEST_NULL;
  worker->channel.post_receive(&request);
  auto deadline = Clock::now() + kHelloTimeout;
  Backoff backoff(1ms, 1ms);
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Test(&request, &arrived, &status);
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
      throw SpawnError(
          fmt::format("fiber: worker {} started but did not report within {} s", id,
                      std::chrono::duration_cast<std::chrono::seconds>(kHelloTimeout).count()));
    }
    backoff.pause();
  }
  worker->channel.send(MessageKind::welcome, {bytes_of(static_cast<std::int32_t>(id))});
  worker->channel.post_receive(&request);
  workers_.push_back(std::move(worker));
  receives_.push_back(request);
  worker_count_.store(static_cast<int>(workers_.size()));
  return id;
}

void Dispatcher::send_chunk(Worker& worker, const std::shared_ptr<Job>& job, std::size_t first,
                            std::size_t count) {
  std::uint64_t chunk_id = next_chunk_id_++;
  RunHeader header{chunk_id, static_cast<std::uint32_t>(job->task().size()),
                   static_cast<std::uint32_t>(count)};
  auto offsets = job->offsets(first, count);
  std::vector<std::uint64_t> relative(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) relative[i] = offsets[i] - offsets[0];
  worker.channel.send(MessageKind::run,
                      {bytes_of(header), std::span(job->task().data(), job->task().size()),
                       std::span(reinterpret_cast<const char*>(relative.data()),
                                 relative.size() * sizeof(std::uint64_t)),
                       job->arguments(first, count)},
                      job);
  worker.in_flight.push_back({chunk_id, job, first, count});
}

std::size_t Dispatcher::chunk_size(const PoolHandle& pool, const Job& job) const {
  std::size_t remaining = job.size() - job.next_unsent;
  if (job.chunksize() > 0) return std::min(job.chunksize(), remaining);
  auto timing = timings_.find(job.task());
  if (timing == timings_.end() || !timing->second.measured) return 1;  // probe the cost first
  // Guided: never more than half of a fair share of what is left, so the tail stays balanced.
  std::size_t workers = std::max<std::size_t>(1, pool.workers.size());
  std::size_t guided = std::max<std::size_t>(1, remaining / (2 * workers));
  double per_item = std::max(timing->second.seconds_per_item, 1e-9);
  auto by_time = static_cast<std::size_t>(std::max(1.0, kTargetChunkSeconds / per_item));
  return std::min({by_time, guided, remaining});
}

std::size_t Dispatcher::in_flight_limit(const Job& job, std::size_t chunk) const {
  // A chunk queued behind the running one hides the round trip, but a worker must never hold
  // work that another could start: only short chunks (measured) are queued, and the shorter they
  // are, the deeper the pipeline. Long ones go one at a time, the round trip small beside them.
  auto timing = timings_.find(job.task());
  if (timing == timings_.end() || !timing->second.measured) return 1;
  double chunk_seconds = timing->second.seconds_per_item * static_cast<double>(chunk);
  if (chunk_seconds < 50e-6) return 8;
  if (chunk_seconds < 2e-3) return 2;
  return 1;
}

bool Dispatcher::dispatch() {
  bool sent = false;
  for (auto& pool : pools_) {
    if (pool->terminated) continue;
    // Two passes: first every worker with nothing to do gets a chunk, then queues fill up.
    for (int pass = 0; pass < 2 && !pool->queue.empty(); ++pass) {
      for (int id : pool->workers) {
        Worker& worker = *workers_[id];
        while (!pool->queue.empty()) {
          auto& job = pool->queue.front();
          std::size_t count = chunk_size(*pool, *job);
          // Prefetch only for a worker that answered just now: one stuck in a long item must
          // not collect work that another could start.
          bool answering = Clock::now() - worker.last_result < 1ms;
          std::size_t limit = pass == 0 || !answering ? 1 : in_flight_limit(*job, count);
          if (worker.in_flight.size() >= limit) break;
          std::size_t first = job->next_unsent;
          job->next_unsent += count;
          auto keep = job;
          if (job->next_unsent == job->size()) pool->queue.pop_front();
          send_chunk(worker, keep, first, count);
          sent = true;
        }
      }
    }
  }
  return sent;
}

bool Dispatcher::poll_workers() {
  if (receives_.empty()) return false;
  bool any = false;
  static thread_local std::vector<int> indices;
  static thread_local std::vector<MPI_Status> statuses;
  indices.resize(receives_.size());
  statuses.resize(receives_.size());
  int completed = 0;
  mpi::check(MPI_Testsome(static_cast<int>(receives_.size()), receives_.data(), &completed,
                          indices.data(), statuses.data()),
             "MPI_Testsome");
  if (completed == MPI_UNDEFINED) return false;
  for (int k = 0; k < completed; ++k) {
    int id = indices[k];
    auto message = workers_[id]->channel.on_received(statuses[k], &receives_[id]);
    if (!message) continue;
    workers_[id]->channel.post_receive(&receives_[id]);
    on_message(id, std::move(*message));
    any = true;
  }
  for (auto& worker : workers_) worker->channel.progress_sends();
  return any;
}

void Dispatcher::on_message(int worker_id, Message message) {
  Worker& worker = *workers_[worker_id];
  if (message.kind == MessageKind::result) {
    on_result(worker, std::move(message));
    return_if_drained(worker_id);
  }
}

void Dispatcher::on_result(Worker& worker, Message message) {
  auto payload = std::make_shared<const Bytes>(std::move(message.body));
  BodyReader reader(*payload);
  auto header = reader.raw<ResultHeader>();
  auto chunk = std::find_if(worker.in_flight.begin(), worker.in_flight.end(),
                            [&](const InFlight& c) { return c.chunk_id == header.chunk_id; });
  if (chunk == worker.in_flight.end()) {
    throw Error(fmt::format("fiber: worker {} answered a chunk it was not given", worker.info.id));
  }
  InFlight done = std::move(*chunk);
  worker.in_flight.erase(chunk);
  worker.last_result = Clock::now();
  if (header.cancelled) return;  // its items were failed when the pool was terminated

  if (header.count > 0) {
    auto& timing = timings_[done.job->task()];
    double per_item = static_cast<double>(header.elapsed_ns) * 1e-9 / header.count;
    timing.seconds_per_item =
        timing.measured ? 0.8 * timing.seconds_per_item + 0.2 * per_item : per_item;
    timing.measured = true;
  }

  std::vector<Job::ItemResult> results(header.count);
  std::vector<ItemStatus> statuses(header.count);
  for (auto& status : statuses) status = reader.raw<ItemStatus>();
  std::uint64_t offset = reader.position();
  for (std::uint32_t i = 0; i < header.count; ++i) {
    auto& result = results[i];
    result.ok = statuses[i].ok != 0;
    result.offset = offset;
    result.size = statuses[i].size;
    if (!result.ok) {
      BodyReader error(std::span<const char>(*payload).subspan(offset, statuses[i].size));
      std::string type = error.string();
      std::string what = error.string();
      result.error = std::make_exception_ptr(TaskError(done.job->task(), type, what, worker.info));
    }
    offset += statuses[i].size;
  }
  done.job->store(done.first, std::move(results), std::move(payload));
}

bool Dispatcher::work_in_flight() const {
  for (const auto& worker : workers_) {
    if (!worker->in_flight.empty()) return true;
  }
  for (const auto& pool : pools_) {
    if (!pool->queue.empty()) return true;
  }
  return false;
}

void Dispatcher::loop() {
  Backoff backoff(10ms, 1ms);
  auto last_activity = Clock::now();
  for (;;) {
    if (!work_in_flight()) {
      // Nothing can arrive from the workers: spin on the inbox for a moment (the next call of a
      // loop of apply_async rounds comes within microseconds, a thread wake-up costs more), then
      // sleep until told.
      while (!inbox_filled_.load(std::memory_order_acquire) &&
             Clock::now() - last_activity < 2ms) {
        sched_yield();
      }
    }
    std::vector<std::function<void()>> commands;
    {
      std::unique_lock lock(inbox_mutex_);
      if (inbox_.empty() && !stopping_ && !work_in_flight()) {
        inbox_changed_.wait(lock, [this] { return !inbox_.empty() || stopping_; });
      }
      commands.swap(inbox_);
      inbox_filled_.store(false, std::memory_order_relaxed);
      if (stopping_ && commands.empty()) break;
    }
    for (auto& command : commands) command();
    bool active = !commands.empty();
    active |= poll_workers();
    active |= dispatch();
    if (active) {
      backoff.activity();
      last_activity = Clock::now();
    } else {
      backoff.pause();
    }
  }
  shutdown_workers();
}

void Dispatcher::shutdown_workers() {
  // Let chunks still running finish (their results are dropped), so that no send is left
  // half-done when the processes disconnect.
  auto error = std::make_exception_ptr(Error("fiber: the runtime stopped before this task ran"));
  for (auto& pool : pools_) {
    for (auto& job : pool->queue) job->fail_pending(error);
    pool->queue.clear();
  }
  for (auto& worker : workers_) {
    for (auto& chunk : worker->in_flight) chunk.job->fail_pending(error);
    if (!worker->in_flight.empty()) worker->channel.send(MessageKind::drop);
  }
  Backoff backoff(10ms, 1ms);
  while (work_in_flight()) {
    if (poll_workers()) {
      backoff.activity();
    } else {
      backoff.pause();
    }
  }
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    MPI_Cancel(&receives_[id]);
    MPI_Wait(&receives_[id], MPI_STATUS_IGNORE);
    workers_[id]->channel.send(MessageKind::shutdown);
  }
  for (auto& worker : workers_) {
    worker->channel.wait_sends();
    worker->comm.disconnect();
  }
  workers_.clear();
}

}  // namespace fiber::detail
