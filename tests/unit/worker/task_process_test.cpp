// TaskProcess: a real forked child that runs chunks sent over its pipe and answers their
// records, and that gives back every descriptor and mapping it took.
#include "worker/task_process.hpp"

#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fiber/task.hpp"
#include "posix/unique_fd.hpp"
#include "support/process_resources.hpp"
#include "support/run_bodies.hpp"

namespace {

using namespace std::chrono_literals;
using fiber::Bytes;
using fiber::detail::TaskProcess;
using fiber::detail::task_frames::AnswerReader;

int triple(int x) { return 3 * x; }
FIBER_TASK(triple);

int crash_on(int x) {
  if (x < 0) std::raise(SIGSEGV);
  return x;
}
FIBER_TASK(crash_on);

std::string text_of(int size) { return std::string(static_cast<std::size_t>(size), 'r'); }
FIBER_TASK(text_of);

int crash_after(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  std::raise(SIGSEGV);
  return 0;
}
FIBER_TASK(crash_after);

int nap(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return milliseconds;
}
FIBER_TASK(nap);

Bytes argument(int x) { return fiber::call(triple, x).arguments; }

// More than a task ring holds (256 KiB).
constexpr int kLargerThanTheRing = 1 << 20;

// The write system calls (write, writev, ...) a process of ours has made: /proc/PID/io.
std::uint64_t write_calls(pid_t pid) {
  std::ifstream io("/proc/" + std::to_string(pid) + "/io");
  for (std::string key; io >> key;) {
    std::uint64_t value = 0;
    io >> value;
    if (key == "syscw:") return value;
  }
  return 0;
}

// The one child this process has forked (the task process).
pid_t only_child() {
  pid_t child = -1;
  for (const auto& thread : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(thread.path() / "children");
    for (pid_t pid; children >> pid;) child = pid;
  }
  return child;
}

constexpr auto kAnswerWait = 10ms;
constexpr int kAnswerAttempts = 1000;  // ~10 s: a loaded machine is slow, a lost answer fails

// A chunk's answer: its records and its run time, as the worker reads them.
struct Answer {
  std::vector<fiber::unit::ItemOutcome> items;
  std::optional<std::chrono::nanoseconds> ran;
};

// Reads the answer of the next chunk, of `count` items, until it is whole or the task process
// died (then `death` says how, and `ran` is empty).
Answer receive_answer(TaskProcess& process, AnswerReader& answers, std::size_t count,
                      std::string& death) {
  Answer answer;
  for (int attempt = 0; attempt < kAnswerAttempts && !answer.ran; ++attempt) {
    bool alive = process.receive(answers, kAnswerWait, death);
    while (answer.items.size() < count) {
      auto record = answers.next_record();
      if (!record) break;
      answer.items.push_back(fiber::unit::read_records(*record, 1).front());
    }
    if (answer.items.size() == count) answer.ran = answers.next_run_time();
    if (!alive) break;
  }
  return answer;
}

TEST(TaskProcess, RunsAChunkAndAnswersItsRecordsThenItsRunTime) {
  TaskProcess process;
  process.start();
  ASSERT_TRUE(process.running());
  ASSERT_TRUE(
      process.send(fiber::unit::run_body("triple", {argument(2), argument(5)}, {.chunk_id = 7})));
  AnswerReader answers;
  std::string death;
  Answer answer = receive_answer(process, answers, 2, death);
  ASSERT_TRUE(answer.ran) << death;
  EXPECT_GE(answer.ran->count(), 0);
  ASSERT_EQ(answer.items.size(), 2u);
  EXPECT_TRUE(answer.items[0].ok);
  EXPECT_EQ(fiber::decode<int>(answer.items[0].bytes), 6);
  EXPECT_EQ(fiber::decode<int>(answer.items[1].bytes), 15);
  EXPECT_EQ(process.current_chunk(), 7u);
  EXPECT_EQ(process.current_item(), 1u);
  process.stop();
  EXPECT_FALSE(process.running());
}

TEST(TaskProcess, ChunksWaitingInThePipeAreAnsweredInTheOrderSent) {
  TaskProcess process;
  process.start();
  for (std::uint64_t chunk = 1; chunk <= 3; ++chunk) {
    ASSERT_TRUE(process.send(
        fiber::unit::run_body("triple", {argument(static_cast<int>(chunk))}, {.chunk_id = chunk})));
  }
  AnswerReader answers;
  std::string death;
  for (int chunk = 1; chunk <= 3; ++chunk) {
    Answer answer = receive_answer(process, answers, 1, death);
    ASSERT_TRUE(answer.ran) << "chunk " << chunk << ": " << death;
    EXPECT_EQ(fiber::decode<int>(answer.items.at(0).bytes), 3 * chunk);
  }
  EXPECT_EQ(process.current_chunk(), 3u);
  EXPECT_EQ(process.kill(), "killed by signal SIGKILL (Killed)");
  EXPECT_FALSE(process.running());
}

TEST(TaskProcess, ACrashingTaskEndsTheChildAndSaysHow) {
  TaskProcess process;
  process.start();
  ASSERT_TRUE(process.send(
      fiber::unit::run_body("crash_on", {argument(1), argument(-1)}, {.chunk_id = 3})));
  AnswerReader answers;
  std::string death;
  Answer answer = receive_answer(process, answers, 2, death);
  EXPECT_FALSE(answer.ran);
  EXPECT_EQ(death, "killed by signal SIGSEGV (Segmentation fault)");
  EXPECT_FALSE(process.running());
  EXPECT_EQ(process.current_chunk(), 3u);
  EXPECT_EQ(process.current_item(), 1u);
  EXPECT_FALSE(process.send(fiber::unit::run_body("triple", {argument(1)})));
}

TEST(TaskProcess, AnAnswerLargerThanItsRingComesWhole) {
  TaskProcess process;
  process.start();
  ASSERT_TRUE(process.send(fiber::unit::run_body(
      "text_of", {fiber::call(text_of, kLargerThanTheRing).arguments}, {.chunk_id = 4})));
  AnswerReader answers;
  std::string death;
  Answer answer = receive_answer(process, answers, 1, death);
  ASSERT_TRUE(answer.ran) << death;
  EXPECT_EQ(fiber::decode<std::string>(answer.items.at(0).bytes), text_of(kLargerThanTheRing));
}

TEST(TaskProcess, AChunkLargerThanItsRingReachesTheChild) {
  TaskProcess process;
  process.start();
  std::vector<Bytes> items(kLargerThanTheRing / 16, argument(2));
  ASSERT_TRUE(process.send(fiber::unit::run_body("triple", items, {.chunk_id = 5})));
  AnswerReader answers;
  std::string death;
  Answer answer = receive_answer(process, answers, items.size(), death);
  ASSERT_TRUE(answer.ran) << death;
  EXPECT_EQ(fiber::decode<int>(answer.items.back().bytes), 6);
}

TEST(TaskProcess, ASendWaitingForRoomEndsWhenTheChildDies) {
  TaskProcess process;
  process.start();
  ASSERT_TRUE(process.send(fiber::unit::run_body(
      "crash_after", {fiber::call(crash_after, 100).arguments}, {.chunk_id = 6})));
  std::vector<Bytes> items(kLargerThanTheRing / 16, argument(1));
  EXPECT_FALSE(process.send(fiber::unit::run_body("triple", items, {.chunk_id = 7})));
  AnswerReader answers;
  std::string death;
  receive_answer(process, answers, 1, death);
  EXPECT_EQ(death, "killed by signal SIGSEGV (Segmentation fault)");
}

// A send that waits for room calls its hook meanwhile, as often as it waits: the worker
// heartbeats from it while a large body goes into a busy task process (multinode_relay_loss: the
// copies of a 200 MB broadcast kept workers silent for the whole worker_timeout).
TEST(TaskProcess, ASendWaitingForRoomCallsItsHookMeanwhile) {
  constexpr int kNapMs = 200;
  TaskProcess process;
  process.start();
  ASSERT_TRUE(process.send(
      fiber::unit::run_body("nap", {fiber::call(nap, kNapMs).arguments}, {.chunk_id = 8})));
  std::vector<Bytes> items(kLargerThanTheRing / 16, argument(3));
  int waits = 0;
  ASSERT_TRUE(
      process.send(fiber::unit::run_body("triple", items, {.chunk_id = 9}), [&] { ++waits; }));
  EXPECT_GT(waits, 0);
  AnswerReader answers;
  std::string death;
  ASSERT_TRUE(receive_answer(process, answers, 1, death).ran) << death;
  Answer answer = receive_answer(process, answers, items.size(), death);
  ASSERT_TRUE(answer.ran) << death;
  EXPECT_EQ(fiber::decode<int>(answer.items.back().bytes), 9);
}

// The hop costs the task process no write call: answers go through shared memory.
TEST(TaskProcess, ChunksOneAtATimeCostTheChildNoWriteCalls) {
  constexpr int kChunks = 200;
  TaskProcess process;
  process.start();
  pid_t child = only_child();
  ASSERT_GT(child, 0);
  AnswerReader answers;
  std::string death;
  std::uint64_t before = write_calls(child);
  for (int chunk = 1; chunk <= kChunks; ++chunk) {
    ASSERT_TRUE(process.send(fiber::unit::run_body(
        "triple", {argument(chunk)}, {.chunk_id = static_cast<std::uint64_t>(chunk)})));
    ASSERT_TRUE(receive_answer(process, answers, 1, death).ran) << death;
  }
  EXPECT_LT(write_calls(child) - before, static_cast<std::uint64_t>(kChunks / 10));
}

// A worker whose task runs long sleeps in sleep_until_news: its child's answer ends the sleep,
// as do the child's death and a ring of the doorbell it is given, each long before the timeout;
// with none of them, the timeout does.
constexpr auto kLongNap = 10s;  // the sleep's timeout: reaching it fails the test
constexpr int kTaskMilliseconds = 50;

// Starts `process` on one chunk of `task` (`function` of kTaskMilliseconds), then sleeps until
// news: the child's, long before kLongNap.
template <class F>
void sleep_through_one_chunk(TaskProcess& process, const char* task, F function) {
  process.start();
  ASSERT_TRUE(process.send(fiber::unit::run_body(
      task, {fiber::call(function, kTaskMilliseconds).arguments}, {.chunk_id = 1})));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(process.sleep_until_news(kLongNap, -1));
  EXPECT_LT(std::chrono::steady_clock::now() - start, kLongNap / 2);
}

TEST(TaskProcess, SleepUntilNewsEndsWithTheChildsAnswer) {
  TaskProcess process;
  sleep_through_one_chunk(process, "nap", nap);
  AnswerReader answers;
  std::string death;
  EXPECT_TRUE(receive_answer(process, answers, 1, death).ran) << death;
}

TEST(TaskProcess, SleepUntilNewsEndsWithTheChildsDeath) {
  TaskProcess process;
  sleep_through_one_chunk(process, "crash_after", crash_after);
  AnswerReader answers;
  std::string death;
  EXPECT_FALSE(receive_answer(process, answers, 1, death).ran);
  EXPECT_NE(death.find("SIGSEGV"), std::string::npos) << death;
}

TEST(TaskProcess, SleepUntilNewsSaysWhenItsDoorbellRang) {
  TaskProcess process;
  process.start();
  ASSERT_TRUE(process.send(fiber::unit::run_body(
      "nap", {fiber::call(nap, 20 * kTaskMilliseconds).arguments}, {.chunk_id = 1})));
  fiber::posix::UniqueFd doorbell(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  ASSERT_TRUE(doorbell);
  std::thread ringer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(kTaskMilliseconds));
    const std::uint64_t one = 1;
    EXPECT_EQ(write(doorbell.get(), &one, sizeof one), static_cast<ssize_t>(sizeof one));
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(process.sleep_until_news(kLongNap, doorbell.get()));
  EXPECT_LT(std::chrono::steady_clock::now() - start, kLongNap / 2);
  ringer.join();
  const auto short_nap = std::chrono::milliseconds(kTaskMilliseconds);
  const auto again = std::chrono::steady_clock::now();
  EXPECT_FALSE(process.sleep_until_news(short_nap, -1));  // the task still runs: the timeout
  EXPECT_GE(std::chrono::steady_clock::now() - again, short_nap);
}

TEST(TaskProcess, GivesBackItsDescriptorsAndSharedMemory) {
  std::size_t descriptors = fiber::unit::open_file_descriptors();
  std::size_t mappings = fiber::unit::task_memory_mappings();
  for (int round = 0; round < 3; ++round) {
    TaskProcess process;
    process.start();
    process.stop();
    process.start();  // a new child after the first: a memory of its own, the last one unmapped
    EXPECT_EQ(fiber::unit::task_memory_mappings(), mappings + 1);
  }
  EXPECT_EQ(fiber::unit::open_file_descriptors(), descriptors);
  EXPECT_EQ(fiber::unit::task_memory_mappings(), mappings);
}

}  // namespace
