#include "fiber/detail/input_feed.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "caller/job_state.hpp"
#include "caller/progress_driver.hpp"
#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

// How far the feeder reads ahead of what the caller has taken: this many items per worker with
// automatic chunks (a worker may hold up to 64 short chunks, chunk_policy.hpp), this many chunks
// per worker with an explicit chunksize, and never more than this many bytes of encoded input.
constexpr std::size_t kItemsAheadPerWorker = 4096;
constexpr std::size_t kChunksAheadPerWorker = 4;
constexpr std::size_t kBytesAhead = std::size_t{64} << 20;
// The read-ahead goes out in about this many batches (jobs): the next one is read while a
// quarter of it drains.
constexpr std::size_t kBatchesAhead = 4;
// A batch is submitted, full or not, once reading it took this long: a slow input's items start
// as they come.
constexpr auto kBatchDelay = std::chrono::milliseconds(1);

[[noreturn]] void time_out() { throw TimeoutError("fiber: no result within the timeout"); }

}  // namespace

struct InputFeed::State : std::enable_shared_from_this<State> {
  State(Submit submit_batch, Shape feed_shape)
      : submit(std::move(submit_batch)),
        shape(std::move(feed_shape)),
        granule(std::max<std::size_t>(1, shape.chunksize)),
        lookahead(std::max(kItemsAheadPerWorker, kChunksAheadPerWorker * shape.chunksize) *
                  std::max<std::size_t>(1, shape.workers)),
        batch_items((lookahead / kBatchesAhead + granule - 1) / granule * granule) {}

  struct Batch {
    std::shared_ptr<Job> job;
    std::size_t first;  // its first item's position in the input
    std::size_t bytes;
    std::size_t taken = 0;
  };

  void feed(const Source& source);
  // Adds an item read to the pending batch, and submits the batch if it is due.
  void add(std::unique_lock<std::mutex>& lock, const Bytes& item);
  std::size_t pending_items() const { return pending_offsets.size() - 1; }
  // Submits the pending items, the whole chunks of them unless `all` (with the lock held on
  // entry and return; released while submitting).
  void flush(std::unique_lock<std::mutex>& lock, bool all);
  void count_outcomes(std::size_t sequence, std::size_t count);
  // Waits until ready() or the deadline (false), driving the runtime's progress meanwhile;
  // submits the pending whole chunks if the caller has taken everything submitted.
  template <class Ready>
  bool wait(std::unique_lock<std::mutex>& lock, std::optional<Clock::time_point> deadline,
            const Ready& ready);
  std::optional<Item> next_in_order(std::unique_lock<std::mutex>& lock,
                                    std::optional<Clock::time_point> deadline);
  std::optional<Item> next_completed(std::unique_lock<std::mutex>& lock,
                                     std::optional<Clock::time_point> deadline);
  // Every item read was taken: the input's exception, the reason it stopped, or the end.
  std::optional<Item> end_of_items();
  void took(Batch& batch);

  const Submit submit;
  const Shape shape;
  const std::size_t granule;  // batches hold whole chunks
  const std::size_t lookahead;
  const std::size_t batch_items;

  mutable std::mutex mutex;
  std::condition_variable changed;
  // Items read, not yet submitted (the feeder submits them when due, a starved caller at once).
  Bytes pending;
  std::vector<std::uint64_t> pending_offsets{0};
  Clock::time_point pending_since;
  std::deque<Batch> batches;       // submitted, not all taken
  std::size_t front_sequence = 0;  // the batch number of batches.front()
  // Completion order: for each item with an outcome not yet taken, its batch number.
  std::deque<std::size_t> completed;
  std::size_t read = 0;  // items submitted
  std::size_t taken = 0;
  std::size_t bytes_ahead = 0;  // of the pending items and the batches not all taken
  bool input_ended = false;
  std::exception_ptr input_error;
  std::exception_ptr stopped;
  int submitting = 0;
  bool starved = false;    // the caller waits for an item not submitted yet
  bool unbounded = false;  // Pool::join: read the rest without waiting for the caller
  bool ended = false;      // the caller was given the end (or what ended the stream)
  ProgressDriver* driver = nullptr;
};

void InputFeed::State::feed(const Source& source) {
  Bytes item;
  for (;;) {
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [this] {
        return stopped || unbounded ||
               (read + pending_items() - taken < lookahead && bytes_ahead < kBytesAhead);
      });
      if (stopped) return;
    }
    item.clear();
    std::exception_ptr error;
    bool more = false;
    try {
      more = source(item);
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_lock lock(mutex);
    if (more) {
      add(lock, item);
      continue;
    }
    if (error) {  // as Python: the chunk the exception fell in does not run
      std::size_t kept = pending_items() / granule * granule;
      bytes_ahead -= pending.size() - pending_offsets[kept];
      pending_offsets.resize(kept + 1);
      pending.resize(pending_offsets.back());
    }
    if (!stopped) flush(lock, /*all=*/true);
    input_ended = true;
    input_error = error;
    changed.notify_all();
    return;
  }
}

void InputFeed::State::add(std::unique_lock<std::mutex>& lock, const Bytes& item) {
  if (pending_items() == 0) pending_since = Clock::now();
  pending.insert(pending.end(), item.begin(), item.end());
  pending_offsets.push_back(pending.size());
  bytes_ahead += item.size();
  if (pending_items() % granule != 0) return;
  constexpr std::size_t kBatchBytes = kBytesAhead / kBatchesAhead;
  if (pending_items() >= batch_items || pending.size() >= kBatchBytes ||
      Clock::now() - pending_since >= kBatchDelay) {
    flush(lock, /*all=*/false);
  } else if (starved) {
    changed.notify_all();
  }
}

void InputFeed::State::flush(std::unique_lock<std::mutex>& lock, bool all) {
  std::size_t items = all ? pending_items() : pending_items() / granule * granule;
  if (items == 0 || stopped) return;
  const std::uint64_t bytes = pending_offsets[items];
  Bytes arguments(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(bytes));
  std::vector<std::uint64_t> offsets(
      pending_offsets.begin(), pending_offsets.begin() + static_cast<std::ptrdiff_t>(items) + 1);
  pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(bytes));
  pending_offsets.erase(pending_offsets.begin(),
                        pending_offsets.begin() + static_cast<std::ptrdiff_t>(items));
  for (auto& offset : pending_offsets) offset -= bytes;
  pending_since = Clock::now();
  auto job = std::make_shared<Job>(shape.task, std::move(arguments), std::move(offsets),
                                   shape.chunksize, shape.timeout, shape.timed_as);
  std::size_t sequence = front_sequence + batches.size();
  if (shape.order == Order::completion) {
    job->state().on_outcomes([weak = weak_from_this(), sequence](std::size_t count) {
      if (auto state = weak.lock()) state->count_outcomes(sequence, count);
    });
  }
  batches.push_back({job, read, bytes});
  read += items;
  ++submitting;
  // Unlocked: a submit may run a round on this thread, which stores outcomes.
  lock.unlock();
  try {
    submit(job);
  } catch (...) {
    job->state().fail_pending(std::current_exception());
  }
  lock.lock();
  --submitting;
  if (!driver) driver = job->state().driver();
  changed.notify_all();
}

void InputFeed::State::count_outcomes(std::size_t sequence, std::size_t count) {
  std::lock_guard lock(mutex);
  completed.insert(completed.end(), count, sequence);
  changed.notify_all();
}

template <class Ready>
bool InputFeed::State::wait(std::unique_lock<std::mutex>& lock,
                            std::optional<Clock::time_point> deadline, const Ready& ready) {
  // Woken also when whole chunks are pending while everything submitted was taken: then they go
  // at once, from this thread.
  auto can_flush = [this] { return read == taken && pending_items() >= granule && !stopped; };
  for (;;) {
    if (can_flush()) flush(lock, /*all=*/false);
    if (ready()) return true;
    if (deadline && Clock::now() >= *deadline) return false;
    starved = read == taken;
    auto woken = [&] { return ready() || can_flush(); };
    bool drove = false;
    if (ProgressDriver* by = driver) {
      lock.unlock();
      drove = by->drive(
          [&] {
            std::lock_guard relock(mutex);
            return static_cast<bool>(woken());
          },
          deadline);
      lock.lock();
    }
    if (!drove && deadline) {
      changed.wait_until(lock, *deadline, woken);
    } else if (!drove) {
      changed.wait(lock, woken);
    }
    starved = false;
  }
}

void InputFeed::State::took(Batch& batch) {
  ++batch.taken;
  ++taken;
  if (batch.taken == batch.job->size()) bytes_ahead -= batch.bytes;
  while (!batches.empty() && batches.front().taken == batches.front().job->size()) {
    batches.pop_front();
    ++front_sequence;
  }
  changed.notify_all();
}

std::optional<InputFeed::Item> InputFeed::State::end_of_items() {
  ended = true;
  if (input_ended) {
    if (input_error) std::rethrow_exception(input_error);
    return std::nullopt;
  }
  std::rethrow_exception(stopped);
}

std::optional<InputFeed::Item> InputFeed::State::next_in_order(
    std::unique_lock<std::mutex>& lock, std::optional<Clock::time_point> deadline) {
  if (!wait(lock, deadline, [this] { return read > taken || input_ended || stopped; })) {
    time_out();
  }
  if (read == taken) return end_of_items();
  // Only this caller takes batches away: the front stays while the lock is released.
  auto job = batches.front().job;
  std::size_t index = taken - batches.front().first;
  lock.unlock();
  bool there = job->wait_item(index, deadline);
  lock.lock();
  if (!there) time_out();
  took(batches.front());
  return Item{std::move(job), index};
}

std::optional<InputFeed::Item> InputFeed::State::next_completed(
    std::unique_lock<std::mutex>& lock, std::optional<Clock::time_point> deadline) {
  auto ready = [this] { return !completed.empty() || ((input_ended || stopped) && read == taken); };
  if (!wait(lock, deadline, ready)) time_out();
  if (completed.empty()) return end_of_items();
  Batch& batch = batches[completed.front() - front_sequence];
  completed.pop_front();
  auto job = batch.job;
  // Its outcome is stored before its completion is counted: there at once.
  std::size_t index = *job->wait_next_completed(batch.taken, Clock::now());
  took(batch);
  return Item{std::move(job), index};
}

InputFeed::InputFeed(Source source, Submit submit, Shape shape)
    : state_(std::make_shared<State>(std::move(submit), std::move(shape))),
      feeder_([state = state_, source = std::move(source)] { state->feed(source); }) {}

InputFeed::~InputFeed() {
  stop(std::make_exception_ptr(PoolClosed("fiber: the result stream was destroyed")));
  feeder_.join();
}

std::optional<InputFeed::Item> InputFeed::next(std::optional<Clock::time_point> deadline) {
  State& state = *state_;
  std::unique_lock lock(state.mutex);
  if (state.ended) return std::nullopt;
  return state.shape.order == Order::submission ? state.next_in_order(lock, deadline)
                                                : state.next_completed(lock, deadline);
}

void InputFeed::stop(const std::exception_ptr& why) {
  State& state = *state_;
  std::unique_lock lock(state.mutex);
  if (!state.stopped) state.stopped = why;
  state.changed.notify_all();
  state.changed.wait(lock, [&state] { return state.submitting == 0; });
}

bool InputFeed::finished() const {
  const State& state = *state_;
  std::lock_guard lock(state.mutex);
  if (!(state.input_ended || state.stopped) || state.submitting > 0) return false;
  return std::all_of(state.batches.begin(), state.batches.end(),
                     [](const State::Batch& batch) { return batch.job->done(); });
}

bool InputFeed::wait_finished(std::optional<Clock::time_point> deadline) {
  State& state = *state_;
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::unique_lock lock(state.mutex);
    state.unbounded = true;
    state.changed.notify_all();
    auto read_to_the_end = [&state] {
      return (state.input_ended || state.stopped) && state.submitting == 0;
    };
    if (!deadline) {
      state.changed.wait(lock, read_to_the_end);
    } else if (!state.changed.wait_until(lock, *deadline, read_to_the_end)) {
      return false;
    }
    for (const auto& batch : state.batches) jobs.push_back(batch.job);
  }
  for (const auto& job : jobs) {
    if (!job->wait_all(deadline)) return false;
  }
  return true;
}

}  // namespace fiber::detail
