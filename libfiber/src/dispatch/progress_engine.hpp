// Who does the dispatcher's work, and when. The work runs in rounds; whoever holds the progress
// lock runs them: the engine's own thread, so that work progresses while the caller computes, or
// a caller that waits for its results, which then steps in for the thread (a result reaches its
// caller with no hand-over between threads). Other threads hand the work commands through an
// inbox. The thread sleeps until told when there is nothing to poll for; it knows nothing of MPI
// or pools (Work is the rest). What each choice costs: docs/design.md, "Threads and the progress
// lock (the master)".
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "caller/progress_driver.hpp"
#include "posix/futex.hpp"

namespace fiber::detail {

class ProgressEngine final : public ProgressDriver {
 public:
  // Whether a round listens to the workers (a caller submitting work does not: see run_soon).
  enum class Listen { to_workers, no };

  // What a round does after running the commands.
  class Work {
   public:
    // True if anything happened. What it throws goes to fail().
    virtual bool step(Listen listen) = 0;
    // Whether the thread must keep polling (work in flight), rather than sleep until told.
    virtual bool must_poll() const = 0;
    // After a quiet round while it must poll: whether the thread may sleep instead, because what
    // it waits for comes as a change of one of `watches` (futex words, filled here) or can wait
    // for the sleep's bound; awake() (in a round's lock) ends what this began.
    virtual bool may_sleep(std::vector<posix::FutexWatch>& watches) = 0;
    virtual void awake() = 0;
    // A round threw: the work is broken.
    virtual void fail(const std::exception_ptr& cause) = 0;
    // The last thing the thread does, after the commands posted before stop().
    virtual void finish() = 0;

   protected:
    ~Work() = default;
  };

  // Shortly after anything happened the thread looks again this often (a caller may have left
  // work in flight and gone on computing); after kQuietBeforeSleep of nothing it sleeps until
  // told. While callers drive progress it looks again this often as long as drives begin (a
  // caller's get() after get() leaves work in flight between two, and waking the thread at the
  // end of each would take the core the workers need), and sleeps until the last driver leaves
  // once one drive lasts (looking every millisecond through a long wait would wake it a thousand
  // times a second for nothing).
  static constexpr auto kLookAgain = std::chrono::milliseconds(1);
  static constexpr auto kQuietBeforeSleep = std::chrono::milliseconds(100);
  // The longest sleep of the thread while it must poll (backoff.hpp), and of its sleep on the
  // work's watches: what comes through MPI meanwhile waits at most this long.
  static constexpr auto kMaxSleep = std::chrono::milliseconds(1);

  explicit ProgressEngine(Work& work) : work_(work) {}
  ~ProgressEngine() { stop(); }
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Starts the thread (once `work` is ready to be called).
  void start();
  // Runs what was posted, then Work::finish(), and ends the thread.
  void stop();

  // Runs `command` in a round and waits for it; what it throws comes back to the caller.
  template <class Command>
  auto run(Command command) -> decltype(command()) {
    std::packaged_task<decltype(command())()> task(std::move(command));
    auto result = task.get_future();
    post([&task] { task(); });
    return result.get();
  }
  // Queues `command` for the next round; `wake`: tell the thread.
  void post(std::function<void()> command, bool wake = true);
  // Runs `command` in a round on this thread at once if nobody else is running rounds (a round
  // that does not listen to the workers: a caller submitting a round of tasks would otherwise give
  // its core away once per task before the last one is sent); else the next round runs it.
  void run_soon(std::function<void()> command);

  // Runs rounds on the calling thread until ready() or the deadline; false if this thread is the
  // one running a round already (it cannot wait by driving).
  bool drive(const std::function<bool()>& ready,
             std::optional<Clock::time_point> deadline) override;

  // Whether the calling thread is running a round now (the lock is not recursive).
  static bool in_round();

 private:
  void loop();
  // Sleeps while callers drive (see kLookAgain); false once the engine stops.
  bool wait_while_driven();
  // One round: the commands, then Work::step; the caller holds progress_mutex_.
  bool round(Listen listen);
  void wake_if_asleep();
  // Sleeps on the work's watches and the inbox word, at most kMaxSleep.
  void sleep_on_watches();
  // Ends a sleep on the inbox word (a command came, the caller left work, the engine stops).
  void tell_watcher();

  Work& work_;
  // Whoever holds it runs the rounds; the work's state and MPI (MPI_THREAD_SERIALIZED) are only
  // touched under it.
  std::mutex progress_mutex_;
  std::atomic<int> drivers_{0};  // callers waiting for results and driving progress meanwhile
  std::atomic<std::uint64_t> drives_{0};  // drives begun so far
  std::uint64_t drives_seen_ = 0;         // by the thread when it last looked
  // The thread sleeps until the last driver leaves and tells it.
  std::atomic<bool> waits_until_told_{false};
  // The thread sleeps until told (nothing to poll for a while): a caller that leaves work in
  // flight must wake it.
  std::atomic<bool> asleep_{false};
  Clock::time_point last_activity_ = Clock::now();

  std::mutex inbox_mutex_;
  std::condition_variable inbox_changed_;
  std::vector<std::function<void()>> inbox_;
  std::atomic<bool> inbox_filled_{false};  // a look without the lock
  bool stopping_ = false;
  bool unwatched_ = false;  // a caller left work in flight while the thread slept

  // The thread's sleep on the work's futex words (Work::may_sleep): the words, and the inbox
  // word that a command or a caller's news changes.
  std::vector<posix::FutexWatch> watches_;
  std::atomic<std::uint32_t> inbox_word_{0};
  std::atomic<bool> sleeps_on_watches_{false};

  std::thread thread_;
};

}  // namespace fiber::detail
