// Errors: what a pool does when a task throws, crashes, hangs, or is read as the wrong type. A
// failed item fails alone: the pool goes on, and every fiber exception derives from fiber::Error.
//
//   fiberrun -n 1 ./example-error-handling
#include <signal.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;

constexpr int kRetries = 1;        // a crashing item is tried kRetries + 1 times
constexpr auto kDeadline = 100ms;  // longest an item of with_timeout(...) may run
constexpr auto kHangTime = 1h;     // far past the deadline

}  // namespace

// Throws for bad input: the caller gets a fiber::TaskError with the exception's type and message.
int parse_count(std::string text) {
  int count = 0;
  auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (failure != std::errc() || end != text.data() + text.size() || count < 0) {
    throw std::invalid_argument("'" + text + "' is not a count");
  }
  return count;
}
FIBER_TASK(parse_count);

// Segfaults on its first attempt (it leaves a marker file), succeeds when retried: the crash
// ends only the worker's task process, which the worker replaces before the retry.
int crash_once(std::string marker) {
  if (!std::filesystem::exists(marker)) {
    std::ofstream(marker) << "crashed once";
    raise(SIGSEGV);
  }
  return 42;
}
FIBER_TASK(crash_once);

// Segfaults every time: after kRetries + 1 attempts the item fails with fiber::WorkerLost.
int always_crash(int) {
  raise(SIGSEGV);
  return 0;
}
FIBER_TASK(always_crash);

// Never returns in time: killed at its deadline, it fails with fiber::TimeoutError.
int hang(int) {
  std::this_thread::sleep_for(kHangTime);
  return 0;
}
FIBER_TASK(hang);

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  fiber::Pool pool({.processes = 2, .max_retries = kRetries});

  // A task that throws: TaskError says which task, the exception's type and its message.
  try {
    pool.apply(parse_count, std::string("many"));
  } catch (const fiber::TaskError& error) {
    std::printf("TaskError: task %s raised %s: %s\n", error.task().c_str(), error.type().c_str(),
                error.message().c_str());
  }

  // A task that crashes once: retried on a fresh task process, and the call succeeds.
  auto marker = std::filesystem::temp_directory_path() /
                ("fiber-example-crash-once-" + std::to_string(getpid()));
  std::printf("crash_once, retried: %d\n", pool.apply(crash_once, marker.string()));
  std::filesystem::remove(marker);

  // A task that always crashes: WorkerLost names the signal; the pool keeps its workers.
  try {
    pool.apply(always_crash, 0);
  } catch (const fiber::WorkerLost& error) {
    std::string what = error.what();
    bool names_signal = what.find("SIGSEGV") != std::string::npos;
    std::printf("WorkerLost, naming SIGSEGV: %s\n", names_signal ? "yes" : "no");
  }

  // A task past its deadline: killed (and retried), then TimeoutError.
  try {
    pool.apply(fiber::with_timeout(hang, kDeadline), 0);
  } catch (const fiber::TimeoutError&) {
    std::printf("TimeoutError after %lld ms per attempt\n",
                static_cast<long long>(kDeadline.count()));
  }

  // A result read as another type than the task returns: TypeMismatch names the task.
  try {
    pool.apply(fiber::Task<std::string(std::string)>{"parse_count"}, std::string("7"));
  } catch (const fiber::TypeMismatch& error) {
    std::string what = error.what();
    bool names_task = what.find("parse_count") != std::string::npos;
    std::printf("TypeMismatch, naming the task: %s\n", names_task ? "yes" : "no");
  }

  // The pool goes on after all of these.
  std::printf("after the errors: %d\n", pool.apply(parse_count, std::string("7")));
  fiber::PoolStats stats = pool.stats();
  std::printf("crashes %llu, retried %llu, timeouts %llu, failed %llu\n",
              static_cast<unsigned long long>(stats.crashes),
              static_cast<unsigned long long>(stats.tasks_retried),
              static_cast<unsigned long long>(stats.timeouts),
              static_cast<unsigned long long>(stats.tasks_failed));
}
