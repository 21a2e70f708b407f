// Pool basics: the calls of Python's multiprocessing.Pool, on worker processes started by MPI.
//
//   fiberrun -n 1 ./example-pool-basics
#include <fiber/fiber.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

// Tasks are free functions registered by name; master and workers run this same binary.
int square(int x) { return x * x; }
FIBER_TASK(square);

// A task of several parameters, of any type Boost.Serialization handles.
std::string repeat(std::string word, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += word;
  return out;
}
FIBER_TASK(repeat);

namespace {

void print(const char* what, const std::vector<int>& values) {
  std::printf("%s:", what);
  for (int value : values) std::printf(" %d", value);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);  // in a worker, serves tasks and never returns
  fiber::Pool pool({.processes = 2});

  std::vector<int> numbers{1, 2, 3, 4, 5, 6, 7, 8};

  // map: results in item order; the items are cut into chunks automatically.
  print("map", pool.map(square, numbers));

  // imap_unordered: each result as soon as it is there, in the order items finish.
  std::vector<int> streamed;
  for (int value : pool.imap_unordered(square, numbers)) streamed.push_back(value);
  std::sort(streamed.begin(), streamed.end());  // the order of arrival varies from run to run
  print("imap_unordered, sorted", streamed);

  // apply_async: one call; get() waits for it (and rethrows the task's error, if any).
  fiber::AsyncResult<int> pending = pool.apply_async(square, 12);
  std::printf("apply_async: %d\n", pending.get());

  // starmap: each item is a tuple of the task's arguments.
  std::vector<std::tuple<std::string, int>> calls{{"ab", 2}, {"xyz", 3}};
  std::vector<std::string> words = pool.starmap(repeat, calls);
  std::printf("starmap: %s %s\n", words[0].c_str(), words[1].c_str());

  // close and join: no more calls, then wait for what was submitted.
  pool.close();
  pool.join();
  std::printf("tasks completed: %llu\n",
              static_cast<unsigned long long>(pool.stats().tasks_completed));
}
