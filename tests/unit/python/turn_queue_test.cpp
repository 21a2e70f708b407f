// python/src/turn_queue.hpp: turns go in the order they were asked for, even to a thread that
// gives its turn back and asks again at once (what starved Pool.terminate() behind a
// map_reduce_async's driver with std::mutex).
#include "turn_queue.hpp"

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fiber::python {
namespace {

// The state letter of thread `tid` of this process (/proc/self/task/TID/stat: 'S' while it
// sleeps, here in the queue's wait).
char thread_state(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto after_name = line.rfind(')');
  return after_name == std::string::npos || after_name + 2 >= line.size() ? '?'
                                                                          : line[after_name + 2];
}

// Until thread `tid` sleeps: it has asked for its turn and waits for it.
void wait_until_asleep(const std::atomic<pid_t>& tid) {
  while (tid.load() == 0 || thread_state(tid.load()) != 'S') std::this_thread::yield();
}

TEST(TurnQueue, AWaitingThreadGoesBeforeOneThatAsksAgainAtOnce) {
  TurnQueue turns;
  std::vector<std::string> order;
  std::atomic<pid_t> waiter_tid{0};
  turns.lock();
  std::thread waiter([&] {
    waiter_tid = gettid();
    std::lock_guard turn(turns);
    order.push_back("waiter");
  });
  wait_until_asleep(waiter_tid);
  turns.unlock();
  turns.lock();  // at once: std::mutex would most often give it back to this thread
  order.push_back("holder again");
  turns.unlock();
  waiter.join();
  EXPECT_EQ(order, (std::vector<std::string>{"waiter", "holder again"}));
}

TEST(TurnQueue, ThreadsWaitingInLineTakeTheirTurnsInThatOrder) {
  constexpr int kWaiters = 4;
  TurnQueue turns;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  turns.lock();
  for (int i = 0; i < kWaiters; ++i) {
    std::atomic<pid_t> tid{0};
    waiters.emplace_back([&, i] {
      tid = gettid();
      std::lock_guard turn(turns);
      order.push_back(i);
    });
    wait_until_asleep(tid);  // in line before the next one starts
  }
  turns.unlock();
  for (auto& waiter : waiters) waiter.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(TurnQueue, IsExclusiveUnderContention) {
  constexpr int kThreads = 4;
  constexpr int kTurnsEach = 20000;
  TurnQueue turns;
  long counted = 0;  // unguarded but for the queue: a lost update shows a second holder
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      for (int turn = 0; turn < kTurnsEach; ++turn) {
        std::lock_guard held(turns);
        ++counted;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counted, long{kThreads} * kTurnsEach);
}

}  // namespace
}  // namespace fiber::python
