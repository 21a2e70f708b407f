#include "fiber/pool.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include "caller/job_state.hpp"
#include "caller/result_handler.hpp"
#include "dispatch/pool_handle.hpp"
#include "log.hpp"
#include "runtime_state.hpp"

namespace fiber {

namespace detail {
namespace {

PoolOptions validated(PoolOptions options, int default_size) {
  if (options.processes < 0) throw std::invalid_argument("fiber: processes must be >= 0");
  if (options.max_retries < 0) throw std::invalid_argument("fiber: max_retries must be >= 0");
  if (options.task_timeout.count() < 0 || options.worker_timeout.count() <= 0) {
    throw std::invalid_argument("fiber: task_timeout must be >= 0 and worker_timeout > 0");
  }
  if (options.isolation == Isolation::none && options.task_timeout.count() > 0) {
    throw std::invalid_argument(
        "fiber: task_timeout needs Isolation::process (a task in the worker's own process "
        "cannot be stopped)");
  }
  if (options.maxtasksperchild) {
    if (*options.maxtasksperchild <= 0) {
      throw std::invalid_argument("fiber: maxtasksperchild must be > 0 (unset: no limit)");
    }
    if (options.isolation == Isolation::none) {
      throw std::invalid_argument(
          "fiber: maxtasksperchild needs Isolation::process (a worker process cannot end early "
          "on this MPI stack; what is replaced is its task process)");
    }
  }
  if (options.shape.cores < 0) {
    throw std::invalid_argument("fiber: shape.cores must be >= 0 (0: one slot, not bound)");
  }
  if (options.shape.gpus < 0) throw std::invalid_argument("fiber: shape.gpus must be >= 0");
  if (options.max_workers > 0) {
    if (options.min_workers < 0 || options.min_workers > options.max_workers) {
      throw std::invalid_argument("fiber: autoscaling needs 0 <= min_workers <= max_workers");
    }
    if (options.processes == 0) options.processes = std::max(options.min_workers, 1);
    options.processes = std::clamp(options.processes, options.min_workers, options.max_workers);
  } else if (options.processes == 0) {
    options.processes = std::max(1, default_size / std::max(1, options.shape.cores));
  }
  return options;
}

// Waits for the initializers of new workers, every one of them, then throws the first one's
// error: a pool that fails gives back workers that are idle, so that a pool tried again at once
// takes them instead of spawning more.
void wait_for(const Dispatcher::JobsToAwait& initializers) {
  for (auto& job : initializers) job->wait_all(std::nullopt);
  for (auto& job : initializers) job->result(0);
}

std::shared_ptr<PoolHandle> open_pool(const PoolOptions& options) {
  auto& state = runtime_state();
  auto [pool, initializers] = state.dispatcher->open_pool(options);
  try {
    wait_for(initializers);
  } catch (...) {
    state.dispatcher->release(pool);
    throw;
  }
  return pool;
}

// Runs a job's callback; what it throws is said in one line and goes no further (the pool and
// the other callbacks go on).
void run_callback(const JobCallback& callback, const Job& job) {
  try {
    callback(job);
  } catch (const std::exception& error) {
    log::warn("a callback of task '{}' threw, ignored: {}", job.task(), error.what());
  } catch (...) {
    log::warn("a callback of task '{}' threw something that is not a std::exception, ignored",
              job.task());
  }
}

}  // namespace
}  // namespace detail

Pool::Pool(PoolOptions options)
    : options_(detail::validated(std::move(options), detail::runtime_state().default_pool_size)),
      handle_(detail::open_pool(options_)) {}

Pool::~Pool() {
  stop_feeds("fiber: the pool was destroyed before this imap's input was read");
  for (auto& weak : reductions_) {
    if (auto call = weak.lock()) call->orphan();
  }
  // A pool that outlives the runtime has nothing left to release: its workers are gone.
  if (!detail::runtime_live()) return;
  if (state_ == State::running || state_ == State::closed) {
    bool unfinished = false;
    for (auto& weak : submitted_) {
      if (auto job = weak.lock(); job && !job->done()) unfinished = true;
    }
    for (auto& weak : feeds_) {
      if (auto feed = weak.lock(); feed && !feed->finished()) unfinished = true;
    }
    if (unfinished) detail::runtime_state().dispatcher->terminate(handle_);
  }
  detail::runtime_state().dispatcher->release(handle_);
  result_handler_.reset();  // runs the callbacks still queued, then ends its thread
}

void Pool::check_accepts(std::chrono::milliseconds timeout) const {
  if (state_ != State::running) {
    throw PoolClosed(state_ == State::closed ? "fiber: the pool is closed"
                                             : "fiber: the pool was terminated");
  }
  if (timeout.count() > 0 && options_.isolation == Isolation::none) {
    throw std::invalid_argument(
        "fiber: a task timeout needs a pool with Isolation::process (a task in the worker's own "
        "process cannot be stopped)");
  }
}

void Pool::submit(const std::shared_ptr<detail::Job>& job, detail::JobCallback callback) {
  check_accepts(job->state().timeout());
  // Drop finished jobs from the front: amortized O(1) per call, even for 100,000 apply_async.
  while (!submitted_.empty()) {
    auto front = submitted_.front().lock();
    if (front && !front->done()) break;
    submitted_.pop_front();
  }
  submitted_.push_back(job);
  if (callback) call_when_done(job, std::move(callback));
  detail::runtime_state().dispatcher->submit(handle_, job);
}

std::shared_ptr<detail::InputFeed> Pool::start_feed(detail::InputFeed::Source source,
                                                    std::string task, std::size_t chunksize,
                                                    std::chrono::milliseconds timeout,
                                                    std::string timed_as,
                                                    detail::InputFeed::Order order) {
  check_accepts(timeout);
  std::erase_if(feeds_, [](const auto& feed) { return feed.expired(); });
  // Called on the feeder's thread: the dispatcher takes submissions from any thread.
  auto submit_batch = [pool = handle_](const std::shared_ptr<detail::Job>& job) {
    detail::runtime_state().dispatcher->submit(pool, job);
  };
  auto workers = static_cast<std::size_t>(std::max(size(), options_.max_workers));
  auto feed = std::make_shared<detail::InputFeed>(
      std::move(source), std::move(submit_batch),
      detail::InputFeed::Shape{std::move(task), chunksize ? chunksize : options_.chunksize, timeout,
                               workers, order, std::move(timed_as)});
  feeds_.push_back(feed);
  return feed;
}

void Pool::stop_feeds(const char* why) {
  auto error = std::make_exception_ptr(PoolClosed(why));
  for (auto& weak : feeds_) {
    if (auto feed = weak.lock()) feed->stop(error);
  }
}

void Pool::call_when_done(const std::shared_ptr<detail::Job>& job, detail::JobCallback callback) {
  if (!result_handler_) result_handler_ = std::make_shared<detail::ResultHandler>();
  auto post = [weak_handler = std::weak_ptr(result_handler_), weak_job = std::weak_ptr(job),
               callback = std::move(callback)] {
    auto done = weak_job.lock();
    if (!done) return;  // nobody can wait for it any more
    auto handler = weak_handler.lock();
    if (!handler) {  // the pool is gone: nobody runs callbacks
      done->state().callback_finished();
      return;
    }
    handler->post([done, callback] {
      detail::run_callback(callback, *done);
      done->state().callback_finished();
    });
  };
  job->state().call_when_done(post);
  // An empty call never reaches the dispatcher: it is done now.
  if (job->size() == 0) post();
}

void Pool::broadcast_call(const Call& call) {
  if (state_ != State::running) throw PoolClosed("fiber: broadcast() on a closed pool");
  detail::runtime_state().dispatcher->broadcast(handle_, call);
}

void Pool::resize(int processes) {
  if (processes < 0) throw std::invalid_argument("fiber: a pool cannot have fewer than 0 workers");
  if (state_ != State::running) throw PoolClosed("fiber: resize() on a closed pool");
  detail::wait_for(detail::runtime_state().dispatcher->resize(handle_, processes));
}

PoolStats Pool::stats() const {
  const auto& counters = handle_->counters;
  PoolStats stats;
  stats.workers = size();
  stats.parked_workers =
      detail::runtime_live() ? detail::runtime_state().dispatcher->parked_count() : 0;
  stats.tasks_completed = counters.completed.load();
  stats.tasks_failed = counters.failed.load();
  stats.tasks_retried = counters.retried.load();
  stats.crashes = counters.crashes.load();
  stats.timeouts = counters.timeouts.load();
  stats.workers_lost = counters.workers_lost.load();
  return stats;
}

void Pool::close() {
  if (state_ == State::running) state_ = State::closed;
}

void Pool::join() { join_until(std::nullopt); }

bool Pool::join_until(std::optional<detail::Clock::time_point> deadline) {
  if (state_ == State::running) {
    throw std::logic_error("fiber: Pool::join() needs close() or terminate() first");
  }
  for (; !submitted_.empty(); submitted_.pop_front()) {  // what finished is not waited for again
    auto job = submitted_.front().lock();
    if (job && !job->wait_all(deadline)) return false;
  }
  for (auto& weak : feeds_) {
    auto feed = weak.lock();
    if (feed && !feed->wait_finished(deadline)) return false;
  }
  return true;
}

void Pool::terminate() {
  if (state_ == State::terminated) return;
  state_ = State::terminated;
  stop_feeds("fiber: the pool was terminated before this imap's input was read");
  detail::runtime_state().dispatcher->terminate(handle_);
}

int Pool::size() const {
  std::lock_guard lock(handle_->info_mutex);
  return static_cast<int>(handle_->worker_infos.size());
}

std::vector<WorkerInfo> Pool::workers() const {
  std::lock_guard lock(handle_->info_mutex);
  return handle_->worker_infos;
}

}  // namespace fiber
