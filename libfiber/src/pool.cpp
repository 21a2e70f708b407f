#include "fiber/pool.hpp"

#include "pool_handle.hpp"
#include "runtime_state.hpp"

namespace fiber {

namespace detail {
namespace {

std::shared_ptr<PoolHandle> open_pool(const PoolOptions& options) {
  auto& state = runtime_state();
  PoolOptions resolved = options;
  if (resolved.processes < 0) throw std::invalid_argument("fiber: processes must be >= 0");
  if (resolved.processes == 0) resolved.processes = state.default_pool_size;
  auto [pool, initializers] = state.dispatcher->open_pool(resolved);
  try {
    for (auto& job : initializers) {
      job->wait_all(std::nullopt);
      job->result(0);  // throws the initializer's error
    }
  } catch (...) {
    state.dispatcher->release(pool);
    throw;
  }
  return pool;
}

}  // namespace
}  // namespace detail

Pool::Pool(PoolOptions options)
    : options_(std::move(options)), handle_(detail::open_pool(options_)) {}

Pool::~Pool() {
  // A pool that outlives the runtime has nothing left to release: its workers are gone.
  if (!detail::runtime_live()) return;
  if (state_ == State::running || state_ == State::closed) {
    bool unfinished = false;
    for (auto& weak : submitted_) {
      if (auto job = weak.lock(); job && !job->done()) unfinished = true;
    }
    if (unfinished) detail::runtime_state().dispatcher->terminate(handle_);
  }
  detail::runtime_state().dispatcher->release(handle_);
}

void Pool::submit(const std::shared_ptr<detail::Job>& job) {
  if (state_ != State::running) {
    throw PoolClosed(state_ == State::closed ? "fiber: the pool is closed"
                                             : "fiber: the pool was terminated");
  }
  // Drop finished jobs from the front: amortized O(1) per call, even for 100,000 apply_async.
  while (!submitted_.empty()) {
    auto front = submitted_.front().lock();
    if (front && !front->done()) break;
    submitted_.pop_front();
  }
  submitted_.push_back(job);
  detail::runtime_state().dispatcher->submit(handle_, job);
}

void Pool::close() {
  if (state_ == State::running) state_ = State::closed;
}

void Pool::join() {
  if (state_ == State::running) {
    throw std::logic_error("fiber: Pool::join() needs close() or terminate() first");
  }
  for (auto& weak : submitted_) {
    if (auto job = weak.lock()) job->wait_all(std::nullopt);
  }
  submitted_.clear();
}

void Pool::terminate() {
  if (state_ == State::terminated) return;
  state_ = State::terminated;
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
