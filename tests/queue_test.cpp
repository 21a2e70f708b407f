// fiber::Queue and SimpleQueue, as Python's multiprocessing queues: FIFO, maxsize (Full), Empty
// at a timeout, from the master, Processes and pool tasks; 100,000 items through 4 Processes
// exactly once, in batches and one put / get at a time (through the feeder thread and the
// read-ahead); what a process read ahead goes back to the queue; a producer that crashes leaves
// what it had flushed and the queue goes on.
#include <gtest/gtest.h>
#include <signal.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int kItems = 100'000;
constexpr int kProducers = 2;
constexpr int kConsumers = 2;
constexpr std::size_t kBatch = 500;
constexpr int kEndOfWork = -1;

void produce(fiber::Queue<int> queue, int first, int count) {
  std::vector<int> batch;
  for (int item = first; item < first + count; ++item) {
    batch.push_back(item);
    if (batch.size() == kBatch) {
      queue.put_many(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) queue.put_many(batch);
}

void produce_one_by_one(fiber::Queue<int> queue, int first, int count) {
  for (int item = first; item < first + count; ++item) queue.put(item);
}

// Takes items until kEndOfWork, and puts what it took on `taken`. The end marks that came in the
// same batch as its own are the other consumers': they go back.
void consume(fiber::Queue<int> work, fiber::Queue<std::vector<int>> taken) {
  std::vector<int> mine;
  int ends = 0;
  while (ends == 0) {
    for (int item : work.get_many(kBatch, 20s)) {
      if (item == kEndOfWork) {
        ++ends;
      } else {
        mine.push_back(item);
      }
    }
  }
  for (; ends > 1; --ends) work.put(kEndOfWork);
  taken.put(mine);
}

void consume_one_by_one(fiber::Queue<int> work, fiber::Queue<std::vector<int>> taken) {
  std::vector<int> mine;
  for (int item = work.get(20s); item != kEndOfWork; item = work.get(20s)) mine.push_back(item);
  taken.put(mine);
}

// Takes one item of a queue (reading ahead more) and returns it.
int take_one(fiber::Queue<int> queue) { return queue.get(10s); }

// Gets `count` items, in the order they come.
std::vector<int> take_all(fiber::Queue<int> queue, int count) {
  std::vector<int> got;
  for (int i = 0; i < count; ++i) got.push_back(queue.get(10s));
  return got;
}

void put_then_crash(fiber::Queue<std::string> queue) {
  queue.put("before the crash");
  queue.flush();
  raise(SIGSEGV);
  queue.put("never put");
}

int put_square(fiber::SimpleQueue<int> queue, int x) {
  queue.put(x * x);
  return x;
}

std::pair<std::string, int> echo_pair(fiber::Queue<std::pair<std::string, int>> in) {
  return in.get(10s);
}

int make_a_queue(int maxsize) {
  fiber::Queue<int> queue(maxsize);
  return maxsize;
}

// Threads of this process now.
std::size_t thread_count() {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                    std::filesystem::directory_iterator()));
}

// How many threads a process that only looks at queues and puts to a bounded one starts.
int threads_started_by_looking(fiber::Queue<int> unbounded, fiber::Queue<int> bounded) {
  const std::size_t before = thread_count();
  (void)unbounded.qsize();
  (void)unbounded.poll(0ms);
  bounded.put(1, 1s);
  (void)bounded.qsize();
  unbounded.flush();
  return static_cast<int>(thread_count() - before);
}

int use_an_unattached_queue(int x) {
  fiber::Queue<int> queue;  // outside the master: only what an argument is read into
  queue.put(x);
  return x;
}

}  // namespace

FIBER_TASK(make_a_queue);
FIBER_TASK(use_an_unattached_queue);
FIBER_TASK(threads_started_by_looking);
FIBER_TASK(produce);
FIBER_TASK(consume);
FIBER_TASK(produce_one_by_one);
FIBER_TASK(consume_one_by_one);
FIBER_TASK(take_one);
FIBER_TASK(take_all);
FIBER_TASK(put_then_crash);
FIBER_TASK(put_square);
FIBER_TASK(echo_pair);

namespace {

TEST(Queue, FifoInTheMaster) {
  fiber::Queue<int> queue;
  EXPECT_TRUE(queue.empty());
  for (int i = 0; i < 10; ++i) queue.put(i);
  EXPECT_EQ(queue.qsize(), 10u);
  EXPECT_FALSE(queue.empty());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(queue.get(), i);
  EXPECT_TRUE(queue.empty());
}

// CPython's test_qsize / test_get_nowait / test_put_nowait with maxsize.
TEST(Queue, MaxsizeRaisesFullAndGetRaisesEmpty) {
  fiber::Queue<int> queue(2);
  queue.put(1);
  queue.put_nowait(2);
  EXPECT_THROW(queue.put_nowait(3), fiber::Full);
  EXPECT_THROW(queue.put(3, 100ms), fiber::Full);
  EXPECT_EQ(queue.qsize(), 2u);
  EXPECT_EQ(queue.get(), 1);
  queue.put(3, 100ms);
  EXPECT_EQ(queue.get_nowait(), 2);
  EXPECT_EQ(queue.get(1s), 3);
  EXPECT_THROW(queue.get_nowait(), fiber::Empty);
  auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(queue.get(300ms), fiber::Empty);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
}

TEST(Queue, AnyType) {
  fiber::Queue<std::pair<std::string, int>> queue;
  queue.put({"seven", 7});
  EXPECT_EQ(queue.get(), std::make_pair(std::string("seven"), 7));
}

TEST(Queue, PoolTasksPutAndGet) {
  fiber::SimpleQueue<int> squares;
  fiber::Pool pool({.processes = 2});
  std::vector<std::tuple<fiber::SimpleQueue<int>, int>> calls;
  for (int x = 1; x <= 20; ++x) calls.emplace_back(squares, x);
  pool.starmap(put_square, calls);
  std::vector<int> got;
  for (int i = 0; i < 20; ++i) got.push_back(squares.get());
  std::sort(got.begin(), got.end());
  std::vector<int> expected;
  for (int x = 1; x <= 20; ++x) expected.push_back(x * x);
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(squares.empty());

  fiber::Queue<std::pair<std::string, int>> to_task;
  auto echoed = pool.apply_async(echo_pair, to_task);
  to_task.put({"from the master", 1});
  EXPECT_EQ(echoed.get(), std::make_pair(std::string("from the master"), 1));
}

using Producer = void (*)(fiber::Queue<int>, int, int);
using Consumer = void (*)(fiber::Queue<int>, fiber::Queue<std::vector<int>>);

// 100,000 items from 2 producer Processes to 2 consumer Processes, each exactly once.
void move_every_item_exactly_once(fiber::Queue<int> work, Producer producer, Consumer consumer) {
  fiber::Queue<std::vector<int>> taken;
  std::vector<std::unique_ptr<fiber::Process>> processes;
  for (int p = 0; p < kProducers; ++p) {
    processes.push_back(std::make_unique<fiber::Process>(producer, work, p * kItems / kProducers,
                                                         kItems / kProducers));
  }
  for (int c = 0; c < kConsumers; ++c) {
    processes.push_back(std::make_unique<fiber::Process>(consumer, work, taken));
  }
  for (auto& process : processes) process->start();
  for (int p = 0; p < kProducers; ++p) {
    processes[p]->join();
    EXPECT_EQ(processes[p]->exitcode(), 0);
  }
  for (int c = 0; c < kConsumers; ++c) work.put(kEndOfWork);
  std::vector<int> all;
  for (int c = 0; c < kConsumers; ++c) {
    auto part = taken.get(30s);
    all.insert(all.end(), part.begin(), part.end());
  }
  for (int c = 0; c < kConsumers; ++c) {
    processes[kProducers + c]->join();
    EXPECT_EQ(processes[kProducers + c]->exitcode(), 0);
  }
  std::sort(all.begin(), all.end());
  std::vector<int> expected(kItems);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

TEST(Queue, ProducersAndConsumersMoveEveryItemExactlyOnce) {
  move_every_item_exactly_once(fiber::Queue<int>(10'000), produce, consume);
}

// One put and one get per item: puts go through the producers' feeder threads, gets read ahead
// (and a consumer's read-ahead holding the other's end mark goes back when it ends).
TEST(Queue, OneItemAtATimeMovesEveryItemExactlyOnce) {
  move_every_item_exactly_once(fiber::Queue<int>(), produce_one_by_one, consume_one_by_one);
}

// A task that got one item read ahead others; they are back in the queue when its result is.
TEST(Queue, ATasksReadAheadIsBackWhenItsResultIs) {
  fiber::Queue<int> queue;
  for (int i = 0; i < 10; ++i) queue.put(i);
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(take_one, queue), 0);
  EXPECT_EQ(queue.qsize(), 9u);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(queue.get_nowait(), i);
}

// The master reads ahead and then stops getting: within the lease the items go back, and a
// Process gets every one of them. (It may get those still at the broker first: order holds for
// each consumer, not across the consumers of one queue.)
TEST(Queue, ReadAheadThatIsNotTakenGoesBack) {
  fiber::Queue<int> queue;
  for (int i = 0; i < 10; ++i) queue.put(i);
  EXPECT_EQ(queue.get(), 0);
  fiber::Pool pool({.processes = 1});
  std::vector<int> rest(9);
  std::iota(rest.begin(), rest.end(), 1);
  auto got = pool.apply(take_all, queue, 9);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, rest);
}

// A process's feeder thread sends its puts to unbounded queues; one that never puts to one starts
// none (a bounded put waits for its answer, and there is nothing to sync before a look).
TEST(Queue, LookingAndBoundedPutsStartNoFeederThread) {
  fiber::Queue<int> unbounded;
  fiber::Queue<int> bounded(4);
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(threads_started_by_looking, unbounded, bounded), 0);
  EXPECT_EQ(bounded.get(1s), 1);
}

// Outside the master a queue cannot be made: one clear error, not a connection to nowhere.
TEST(Queue, IsMadeInTheMasterOnly) {
  fiber::Pool pool({.processes = 1});
  for (auto task : {make_a_queue, use_an_unattached_queue}) {
    try {
      pool.apply(task, 3);
      ADD_FAILURE() << "a task made a queue";
    } catch (const fiber::TaskError& error) {
      EXPECT_NE(error.message().find("a queue is made in the master"), std::string::npos)
          << error.what();
    }
  }
}

TEST(Queue, AWriterThatCrashesLeavesWhatItPutAndTheQueueGoesOn) {
  fiber::Queue<std::string> queue;
  fiber::Process writer(put_then_crash, queue);
  writer.start();
  writer.join();
  EXPECT_EQ(writer.exitcode(), -SIGSEGV);
  EXPECT_EQ(queue.get(5s), "before the crash");
  // Every writer is gone: a get with a timeout returns Empty at its timeout.
  EXPECT_THROW(queue.get(300ms), fiber::Empty);
  queue.put("after");
  EXPECT_EQ(queue.get(), "after");
}

}  // namespace
