// The progress engine with a fake piece of work: who runs the rounds (its thread, a driving
// caller, a submitting caller), commands and their exceptions, a failing round, and the end; work
// a driver leaves in flight is the thread's, without a wake-up of the thread per drive.
#include "dispatch/progress_engine.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// Records what the engine asks of it. Touched only inside rounds, except for the atomics the test
// reads.
class FakeWork final : public ProgressEngine::Work {
 public:
  bool step(ProgressEngine::Listen listen) override {
    EXPECT_TRUE(ProgressEngine::in_round());
    ++steps;
    if (listen == ProgressEngine::Listen::no) ++silent_steps;
    last_thread = std::this_thread::get_id();
    if (last_thread == caller) ++caller_steps;
    if (throw_next.exchange(false)) throw std::runtime_error("the work broke");
    bool took = !hold_work.load() && pending_work.load() > 0 && pending_work.fetch_sub(1) > 0;
    if (took && last_thread != caller) ++pending_taken_by_others;
    return took;
  }
  bool must_poll() const override { return pending_work.load() > 0; }
  bool may_sleep(std::vector<posix::FutexWatch>& watches) override {
    watches.clear();
    if (!sleepable.load()) return false;
    ++sleeps;
    answer_word.store(1);
    watches.push_back({&answer_word, 1});
    return true;
  }
  void awake() override {
    ++wakes;
    answer_word.store(0);
  }
  void fail(const std::exception_ptr& cause) override {
    try {
      std::rethrow_exception(cause);
    } catch (const std::exception& error) {
      failure = error.what();
    }
    ++failures;
  }
  void finish() override { ++finished; }

  std::atomic<int> steps{0};
  std::atomic<int> silent_steps{0};
  std::atomic<int> pending_work{0};
  std::atomic<bool> hold_work{false};  // steps take none of the pending work
  std::atomic<bool> sleepable{false};  // may_sleep() says yes, on answer_word
  std::atomic<std::uint32_t> answer_word{0};
  std::atomic<int> sleeps{0};
  std::atomic<int> wakes{0};
  std::atomic<bool> throw_next{false};
  std::atomic<int> failures{0};
  std::atomic<int> finished{0};
  std::atomic<int> caller_steps{0};
  std::thread::id caller = std::this_thread::get_id();  // the test's thread
  std::thread::id last_thread;
  std::atomic<int> pending_taken_by_others{0};  // work units taken in rounds of other threads
  std::string failure;
};

TEST(ProgressEngine, ACommandRunsInARoundAndGivesBackItsValue) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  EXPECT_FALSE(ProgressEngine::in_round());
  int value = engine.run([] {
    EXPECT_TRUE(ProgressEngine::in_round());
    return 42;
  });
  EXPECT_EQ(value, 42);
  // After the thread went to sleep until told (nothing to poll for), a command still wakes it.
  std::this_thread::sleep_for(ProgressEngine::kQuietBeforeSleep * 2);
  EXPECT_EQ(engine.run([] { return 7; }), 7);
}

TEST(ProgressEngine, ACommandsExceptionReachesItsCaller) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  EXPECT_THROW(engine.run([]() -> int { throw std::invalid_argument("no such pool"); }),
               std::invalid_argument);
  EXPECT_EQ(work.failures.load(), 0);  // the command's failure, not the work's
}

TEST(ProgressEngine, ACallerThatDrivesRunsTheRoundsOnItsOwnThread) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  std::atomic<int> seen{0};
  bool drove = engine.drive([&] { return ++seen > 50; }, std::nullopt);
  EXPECT_TRUE(drove);
  EXPECT_GT(work.caller_steps.load(), 0);
}

TEST(ProgressEngine, DrivingStopsAtTheDeadline) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  auto deadline = Clock::now() + 20ms;
  EXPECT_TRUE(engine.drive([] { return false; }, deadline));
  EXPECT_GE(Clock::now(), deadline);
}

TEST(ProgressEngine, ARoundCannotWaitByDriving) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  bool drove = engine.run([&] { return engine.drive([] { return true; }, std::nullopt); });
  EXPECT_FALSE(drove);
}

TEST(ProgressEngine, RunSoonRunsAtOnceOnTheCallerWithoutListening) {
  FakeWork work;
  ProgressEngine engine(work);  // not started: nobody else runs rounds
  bool ran = false;
  engine.run_soon([&] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_EQ(work.steps.load(), 1);
  EXPECT_EQ(work.silent_steps.load(), 1);
  EXPECT_EQ(work.last_thread, std::this_thread::get_id());
}

TEST(ProgressEngine, RunSoonFromARoundWaitsForTheNextRound) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  std::atomic<bool> ran{false};
  engine.run([&] {
    engine.run_soon([&] { ran = true; });
    EXPECT_FALSE(ran.load());
    return 0;
  });
  engine.run([] { return 0; });  // a later round
  EXPECT_TRUE(ran.load());
}

TEST(ProgressEngine, AFailingRoundGoesToTheWorkAndTheEngineGoesOn) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  work.throw_next = true;
  work.pending_work = 1;  // something to poll for, so that the thread runs a round by itself
  for (int i = 0; i < 1000 && work.failures.load() == 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(work.failures.load(), 1);
  EXPECT_EQ(engine.run([&] { return work.failure; }), "the work broke");
}

TEST(ProgressEngine, StopRunsWhatWasPostedThenFinishesOnce) {
  FakeWork work;
  std::atomic<bool> ran{false};
  {
    ProgressEngine engine(work);
    engine.start();
    engine.post([&] { ran = true; }, /*wake=*/false);
    engine.stop();
    EXPECT_TRUE(ran.load());
    EXPECT_EQ(work.finished.load(), 1);
  }  // the destructor does not stop twice
  EXPECT_EQ(work.finished.load(), 1);
}

TEST(ProgressEngine, ManyThreadsPostingAndDrivingAtOnce) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  constexpr int kThreads = 4;
  constexpr int kCommands = 200;
  std::atomic<int> counted{0};
  int in_rounds = 0;  // only touched inside rounds: a race here is the engine's bug
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCommands; ++i) {
        if (i % 2) {
          engine.run_soon([&] {
            ++in_rounds;
            ++counted;
          });
        } else {
          engine.run([&] { return ++in_rounds; });
          ++counted;
        }
        engine.drive([] { return true; }, std::nullopt);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  engine.run([] { return 0; });  // every run_soon posted before is done
  EXPECT_EQ(counted.load(), kThreads * kCommands);
  EXPECT_EQ(engine.run([&] { return in_rounds; }), kThreads * kCommands);
}

// A loaded machine is slow; work that is never taken fails.
constexpr auto kPatience = 10s;

// Waits until the engine's thread took `units` of work, or the patience ran out.
bool thread_took(const FakeWork& work, int units) {
  for (auto deadline = Clock::now() + kPatience; Clock::now() < deadline;) {
    if (work.pending_taken_by_others.load() >= units) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// A driver that leaves `units` of work in flight as it returns (its ready() says so last).
auto leave_in_flight(FakeWork& work, int units, std::chrono::nanoseconds drive_for) {
  return [&work, units, until = Clock::now() + drive_for] {
    if (Clock::now() < until) return false;
    work.pending_work = units;
    return true;
  };
}

TEST(ProgressEngine, WorkLeftInFlightAfterOneLongDriveIsTheThreads) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  // Longer than kLookAgain: the thread sleeps until the driver leaves and tells it.
  engine.drive(leave_in_flight(work, 3, 20 * ProgressEngine::kLookAgain), std::nullopt);
  EXPECT_TRUE(thread_took(work, 3)) << work.pending_taken_by_others.load() << " taken";
}

TEST(ProgressEngine, WorkLeftInFlightAfterDrivesInQuickSuccessionIsTheThreads) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  for (int i = 0; i < 100; ++i) engine.drive([n = 0]() mutable { return ++n > 1; }, std::nullopt);
  engine.drive(leave_in_flight(work, 3, 0ns), std::nullopt);  // the thread looks within kLookAgain
  EXPECT_TRUE(thread_took(work, 3)) << work.pending_taken_by_others.load() << " taken";
}

// How often the threads of this process other than the calling one were switched out so far.
long other_threads_switches() {
  long switches = 0;
  const std::string self = std::to_string(gettid());
  for (const auto& thread : std::filesystem::directory_iterator("/proc/self/task")) {
    if (thread.path().filename() == self) continue;
    std::ifstream status(thread.path() / "status");
    for (std::string field; status >> field;) {
      if (field == "voluntary_ctxt_switches:" || field == "nonvoluntary_ctxt_switches:") {
        long count = 0;
        status >> count;
        switches += count;
      }
    }
  }
  return switches;
}

// A caller's submit-then-get() is a drive after a drive, as in the paper's rounds: the thread is
// not woken at the end of each (that would be a switch per drive, on the core the workers need,
// docs/design.md, "Threads and the progress lock (the master)"). It may look once per kLookAgain
// (twice that is allowed, as a loaded machine stretches the drives).
TEST(ProgressEngine, DrivesInQuickSuccessionDoNotWakeTheThreadEachTime) {
  FakeWork work;
  ProgressEngine engine(work);
  engine.start();
  engine.run([] { return 0; });  // the thread has started
  constexpr int kDrives = 200;
  constexpr auto kDrive = std::chrono::microseconds(ProgressEngine::kLookAgain) / 10;
  const long before = other_threads_switches();
  const auto start = Clock::now();
  for (int i = 0; i < kDrives; ++i) {
    engine.run_soon([] {});  // a task submitted, then waited for
    engine.drive([until = Clock::now() + kDrive] { return Clock::now() >= until; }, std::nullopt);
  }
  const long looks = (Clock::now() - start) / ProgressEngine::kLookAgain;
  EXPECT_LT(other_threads_switches() - before, kDrives / 4 + 2 * looks);
}

// Starts `engine` on one unit of work in flight that no round takes and that the work says may
// be waited for on its futex word, and lets the thread's busy poll after its start pass.
void start_with_work_held_asleep(FakeWork& work, ProgressEngine& engine) {
  work.pending_work = 1;
  work.hold_work = true;
  work.sleepable = true;
  engine.start();
  std::this_thread::sleep_for(5 * ProgressEngine::kMaxSleep);
}

// Work in flight that the work says may be waited for on a futex word: the thread sleeps there
// (each sleep ends by kMaxSleep) instead of spinning through rounds, and ends each sleep with
// awake(), in a round's lock.
TEST(ProgressEngine, WorkInFlightThatMaySleepIsWaitedForAsleep) {
  FakeWork work;
  ProgressEngine engine(work);
  start_with_work_held_asleep(work, engine);
  const int before = work.steps.load();
  constexpr int kSleeps = 50;
  std::this_thread::sleep_for(kSleeps * ProgressEngine::kMaxSleep);
  // A round per sleep at most, and some slack for the sleeps' ends (spinning: thousands).
  EXPECT_LE(work.steps.load() - before, kSleeps * 3 / 2);
  EXPECT_GT(work.sleeps.load(), 0);
  // An answer: the word changes and its sleeper is woken, as a task ring's write does.
  work.hold_work = false;
  work.answer_word.store(0);
  posix::futex_wake(work.answer_word);
  EXPECT_TRUE(thread_took(work, 1));
  engine.stop();
  EXPECT_EQ(work.sleeps.load(), work.wakes.load());
}

// A command posted while the thread sleeps on the work's words runs (the inbox word wakes it).
TEST(ProgressEngine, ACommandReachesAThreadAsleepOnTheWorksWatches) {
  FakeWork work;
  ProgressEngine engine(work);
  start_with_work_held_asleep(work, engine);
  EXPECT_EQ(engine.run([] { return 7; }), 7);
  work.hold_work = false;
  engine.stop();
  EXPECT_EQ(work.sleeps.load(), work.wakes.load());
}

}  // namespace
}  // namespace fiber::detail
