#include "caller/job_state.hpp"

#include <utility>

namespace fiber::detail {

JobState::JobState(std::string task, Bytes arguments, std::vector<std::uint64_t> offsets,
                   std::size_t chunksize, std::chrono::milliseconds timeout)
    : JobState(std::move(task), std::make_shared<const Bytes>(std::move(arguments)),
               std::move(offsets), chunksize, timeout) {}

JobState::JobState(std::string task, std::shared_ptr<const Bytes> arguments,
                   std::vector<std::uint64_t> offsets, std::size_t chunksize,
                   std::chrono::milliseconds timeout)
    : task_(std::move(task)),
      arguments_(std::move(arguments)),
      offsets_(std::move(offsets)),
      chunksize_(chunksize),
      timeout_(timeout),
      outcomes_(offsets_.size() - 1) {}

std::span<const char> JobState::arguments(std::size_t first, std::size_t count) const {
  return std::span<const char>(*arguments_)
      .subspan(offsets_[first], offsets_[first + count] - offsets_[first]);
}

std::span<const std::uint64_t> JobState::offsets(std::size_t first, std::size_t count) const {
  return std::span<const std::uint64_t>(offsets_).subspan(first, count + 1);
}

void JobState::store(std::size_t first, std::span<ItemResult> results,
                     const std::shared_ptr<const Bytes>& payload) {
  std::unique_lock lock(mutex_);
  if (payload) payloads_.push_back(payload);
  bool wake = waiters_ > 1;
  const std::size_t completed_before = completed_;
  for (std::size_t i = 0; i < results.size(); ++i) {
    Outcome& outcome = outcomes_[first + i];
    if (outcome.set) continue;
    auto& result = results[i];
    outcome = {payload.get(), result.offset, result.size, std::move(result.error), true};
    completion_order_.push_back(first + i);
    ++completed_;
    if (wake_at_item_ == first + i) wake = true;
  }
  if (waiters_ == 1 && completed_ >= wake_at_completed_) wake = true;
  if (wake) changed_.notify_all();
  std::size_t newly = completed_ - completed_before;
  bool finished_now = completed_ == outcomes_.size() && newly > 0;
  lock.unlock();
  if (newly > 0 && on_outcomes_) on_outcomes_(newly);
  if (finished_now && when_done_) when_done_();
}

void JobState::fail_pending(const std::exception_ptr& error) {
  std::unique_lock lock(mutex_);
  const std::size_t completed_before = completed_;
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    if (outcomes_[i].set) continue;
    outcomes_[i].error = error;
    outcomes_[i].set = true;
    completion_order_.push_back(i);
    ++completed_;
  }
  changed_.notify_all();
  std::size_t newly = completed_ - completed_before;
  lock.unlock();
  if (newly > 0 && on_outcomes_) on_outcomes_(newly);
  if (newly > 0 && when_done_) when_done_();
}

void JobState::call_when_done(std::function<void()> hook) {
  when_done_ = std::move(hook);
  callback_pending_ = true;
}

void JobState::callback_finished() {
  {
    std::lock_guard lock(mutex_);
    callback_pending_ = false;
  }
  changed_.notify_all();
}

Job::Job(std::string task, Bytes arguments, std::vector<std::uint64_t> offsets,
         std::size_t chunksize, std::chrono::milliseconds timeout, std::string timed_as)
    : state_(std::make_unique<JobState>(std::move(task), std::move(arguments), std::move(offsets),
                                        chunksize, timeout)) {
  state_->time_as(std::move(timed_as));
}

Job::Job(std::unique_ptr<JobState> state) : state_(std::move(state)) {}

Job::~Job() = default;

const std::string& Job::task() const noexcept { return state_->task(); }
std::size_t Job::size() const noexcept { return state_->size(); }

bool JobState::wait_until(std::unique_lock<std::mutex>& lock,
                          std::optional<Clock::time_point> deadline, const auto& ready) {
  // Do the dispatcher's work on this thread until ready (nothing to hand over); only a thread
  // that cannot (the dispatcher's own work) waits to be woken.
  if (driver_ && !ready()) {
    lock.unlock();
    bool drove = driver_->drive(
        [&] {
          std::lock_guard relock(mutex_);
          return static_cast<bool>(ready());
        },
        deadline);
    lock.lock();
    if (drove) {
      wake_at_item_.reset();
      wake_at_completed_ = 0;
      return ready();
    }
  }
  ++waiters_;
  bool ok = true;
  if (deadline) {
    ok = changed_.wait_until(lock, *deadline, ready);
  } else {
    changed_.wait(lock, ready);
  }
  --waiters_;
  wake_at_item_.reset();
  wake_at_completed_ = 0;
  return ok;
}

bool Job::done() const {
  JobState& s = *state_;
  std::lock_guard lock(s.mutex_);
  return s.completed_ == s.outcomes_.size() && !s.callback_pending_;
}

bool Job::wait_all(std::optional<Clock::time_point> deadline) {
  JobState& s = *state_;
  std::unique_lock lock(s.mutex_);
  s.wake_at_completed_ = s.outcomes_.size();
  if (!s.wait_until(lock, deadline, [&s] { return s.completed_ == s.outcomes_.size(); })) {
    return false;
  }
  // Its callback, if it has one, runs on the result handler's thread before the wait ends.
  auto called_back = [&s] { return !s.callback_pending_; };
  if (!deadline) {
    s.changed_.wait(lock, called_back);
    return true;
  }
  return s.changed_.wait_until(lock, *deadline, called_back);
}

bool Job::wait_item(std::size_t index, std::optional<Clock::time_point> deadline) {
  JobState& s = *state_;
  std::unique_lock lock(s.mutex_);
  s.wake_at_item_ = index;
  s.wake_at_completed_ = s.outcomes_.size();  // or when everything is done
  return s.wait_until(lock, deadline, [&s, index] { return s.outcomes_[index].set; });
}

std::optional<std::size_t> Job::wait_next_completed(std::size_t already_taken,
                                                    std::optional<Clock::time_point> deadline) {
  JobState& s = *state_;
  std::unique_lock lock(s.mutex_);
  s.wake_at_completed_ = already_taken + 1;
  if (!s.wait_until(lock, deadline,
                    [&s, already_taken] { return s.completion_order_.size() > already_taken; })) {
    return std::nullopt;
  }
  return s.completion_order_[already_taken];
}

std::span<const char> Job::result(std::size_t index) const {
  JobState& s = *state_;
  std::lock_guard lock(s.mutex_);
  const JobState::Outcome& outcome = s.outcomes_[index];
  if (outcome.error) std::rethrow_exception(outcome.error);
  return std::span<const char>(*outcome.payload).subspan(outcome.offset, outcome.size);
}

bool Job::succeeded(std::size_t index) const {
  JobState& s = *state_;
  std::lock_guard lock(s.mutex_);
  return s.outcomes_[index].set && !s.outcomes_[index].error;
}

}  // namespace fiber::detail
