#include "dispatch/worker_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fiber::detail {
namespace {

std::vector<int> drain(WorkerQueue& queue) {
  std::vector<int> ids;
  while (!queue.empty()) ids.push_back(queue.pop());
  return ids;
}

TEST(WorkerQueue, GivesWorkersBackInTheOrderTheyWereListed) {
  WorkerQueue queue;
  for (int id : {5, 0, 3}) queue.push(id);
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(drain(queue), (std::vector<int>{5, 0, 3}));
}

TEST(WorkerQueue, ListsAWorkerOnceUntilItIsTakenOff) {
  WorkerQueue queue;
  queue.push(2);
  queue.push(7);
  queue.push(2);  // listed already: keeps its place
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.pop(), 2);
  queue.push(2);  // taken off: listed again, at the back
  EXPECT_EQ(drain(queue), (std::vector<int>{7, 2}));
}

TEST(WorkerQueue, AWorkerOfAnyIdCanBeListed) {
  WorkerQueue queue;
  EXPECT_TRUE(queue.empty());
  queue.push(1000);
  queue.push(1000);
  EXPECT_EQ(drain(queue), std::vector<int>{1000});
}

}  // namespace
}  // namespace fiber::detail
