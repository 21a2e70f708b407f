#include "dispatch/progress_engine.hpp"

#include <utility>

#include "backoff.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// How long a polling loop spins before it sleeps (backoff.hpp).
constexpr auto kSpinFor = 10ms;

// Set while this thread holds an engine's progress lock.
thread_local bool t_in_round = false;

class ProgressLock {
 public:
  explicit ProgressLock(std::mutex& mutex) : lock_(mutex) { t_in_round = true; }
  ProgressLock(std::mutex& mutex, std::try_to_lock_t) : lock_(mutex, std::try_to_lock) {
    if (lock_) t_in_round = true;
  }
  ~ProgressLock() {
    if (lock_) t_in_round = false;
  }
  ProgressLock(const ProgressLock&) = delete;
  ProgressLock& operator=(const ProgressLock&) = delete;
  explicit operator bool() const { return lock_.owns_lock(); }
  void unlock() {
    lock_.unlock();
    t_in_round = false;
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace

bool ProgressEngine::in_round() { return t_in_round; }

void ProgressEngine::start() {
  thread_ = std::thread([this] { loop(); });
}

void ProgressEngine::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(inbox_mutex_);
    stopping_ = true;
  }
  inbox_changed_.notify_all();
  tell_watcher();
  thread_.join();
}

void ProgressEngine::post(std::function<void()> command, bool wake) {
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_.push_back(std::move(command));
    inbox_filled_.store(true, std::memory_order_release);
  }
  if (wake) {
    inbox_changed_.notify_one();
    tell_watcher();
  }
}

void ProgressEngine::tell_watcher() {
  // Either the thread, between raising its flag and its sleep, sees the word changed (the sleep
  // then ends at once), or this sees the flag.
  inbox_word_.fetch_add(1);
  if (sleeps_on_watches_.load()) posix::futex_wake(inbox_word_, /*process_private=*/true);
}

void ProgressEngine::sleep_on_watches() {
  sleeps_on_watches_.store(true);
  const std::uint32_t told = inbox_word_.load();
  if (!inbox_filled_.load()) {
    watches_.push_back({&inbox_word_, told, /*process_private=*/true});
    posix::futex_wait_any(watches_, kMaxSleep);
  }
  sleeps_on_watches_.store(false);
}

void ProgressEngine::run_soon(std::function<void()> command) {
  if (t_in_round) {  // from a round's own work: the next round
    post(std::move(command));
    return;
  }
  ProgressLock progress(progress_mutex_, std::try_to_lock);
  if (!progress) {  // a round is running: the next one takes it
    post(std::move(command));
    return;
  }
  // Behind the commands already posted.
  post(std::move(command), /*wake=*/false);
  round(Listen::no);
  progress.unlock();
  wake_if_asleep();
}

void ProgressEngine::wake_if_asleep() {
  tell_watcher();  // the work left may not be on the watched words
  if (!asleep_.load()) return;
  {
    std::lock_guard lock(inbox_mutex_);
    unwatched_ = true;
  }
  inbox_changed_.notify_one();
}

bool ProgressEngine::round(Listen listen) {
  try {
    std::vector<std::function<void()>> commands;
    if (inbox_filled_.load(std::memory_order_acquire)) {
      std::lock_guard lock(inbox_mutex_);
      commands.swap(inbox_);
      inbox_filled_.store(false, std::memory_order_relaxed);
    }
    auto now = Clock::now();
    for (auto& command : commands) command();
    bool active = !commands.empty();
    active |= work_.step(listen);
    if (active) last_activity_ = now;
    return active;
  } catch (...) {
    work_.fail(std::current_exception());
    return true;
  }
}

bool ProgressEngine::drive(const std::function<bool()>& ready,
                           std::optional<Clock::time_point> deadline) {
  if (t_in_round) return false;
  // The last driver to leave tells the thread only if it sleeps until told (wait_while_driven):
  // else the thread looks again within kLookAgain anyway.
  struct Driving {
    ProgressEngine& engine;
    explicit Driving(ProgressEngine& e) : engine(e) {
      engine.drives_.fetch_add(1);
      engine.drivers_.fetch_add(1);
    }
    ~Driving() {
      if (engine.drivers_.fetch_sub(1) != 1 || !engine.waits_until_told_.load()) return;
      { std::lock_guard lock(engine.inbox_mutex_); }  // a thread between its check and its wait
      engine.inbox_changed_.notify_all();
    }
  } driving(*this);
  Backoff backoff(kSpinFor, kMaxSleep);
  while (!ready()) {
    if (deadline && Clock::now() >= *deadline) break;
    bool active = false;
    {
      ProgressLock progress(progress_mutex_, std::try_to_lock);
      if (progress) active = round(Listen::to_workers);
    }
    if (active) {
      backoff.activity();
    } else {
      backoff.pause();
    }
  }
  return true;
}

bool ProgressEngine::wait_while_driven() {
  std::unique_lock lock(inbox_mutex_);
  while (!stopping_ && drivers_.load() > 0) {
    std::uint64_t drives = drives_.load();
    if (drives != drives_seen_) {  // callers come and go: look again soon, untold
      drives_seen_ = drives;
      inbox_changed_.wait_for(lock, kLookAgain);
      continue;
    }
    // The same drive for kLookAgain: sleep until the last driver leaves and tells (both sides
    // order the flag and drivers_ sequentially consistently, so that one sees the other).
    waits_until_told_.store(true);
    inbox_changed_.wait(lock, [this] { return drivers_.load() == 0 || stopping_; });
    waits_until_told_.store(false);
  }
  return !stopping_;
}

void ProgressEngine::loop() {
  Backoff backoff(kSpinFor, kMaxSleep);
  bool watched = false;  // the work's watches are raised (Work::may_sleep)
  for (;;) {
    if (!wait_while_driven()) break;
    ProgressLock progress(progress_mutex_);
    if (std::exchange(watched, false)) work_.awake();
    if (drivers_.load() > 0) continue;
    if (round(Listen::to_workers)) {
      backoff.activity();
      continue;
    }
    if (work_.must_poll()) {
      // Past the busy poll right after activity, a sleep that the answer ends beats spinning:
      // the spin takes a core from the task processes and the caller (docs/design.md, "Threads
      // and the progress lock").
      watched = backoff.quiet() >= Backoff::kBusyPoll && work_.may_sleep(watches_);
      progress.unlock();
      if (watched) {
        sleep_on_watches();
      } else {
        backoff.pause();
      }
      continue;
    }
    // Nothing to poll for: wait for a command, looking again now and then while things happen
    // (a caller that submitted from its own thread wakes the thread only once it sleeps until
    // told).
    bool quiet = Clock::now() - last_activity_ > kQuietBeforeSleep;
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
  if (watched) work_.awake();
  round(Listen::to_workers);  // commands posted before the stop
  work_.finish();
}

}  // namespace fiber::detail
