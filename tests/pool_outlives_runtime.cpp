// A pool held by a static object that outlives the fiber::Runtime, used and never closed: the
// program exits with status 0 and says nothing on stderr (CPython's
// test_worker_finalization_via_atexit_handler_of_multiprocessing, whose Pool is held by a
// global object). With --unfinished the pool also keeps work that nobody waits for.
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

namespace {

constexpr int kWorkers = 2;
constexpr int kItems = 10;
// Longer than the test's timeout: such a task is never waited for.
constexpr int kForeverMs = 3'600'000;

}  // namespace

int square(int x) { return x * x; }
FIBER_TASK(square);

int sleep_then(int value, int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return value;
}
FIBER_TASK(sleep_then);

namespace {

// Python's global object holding the pool: destroyed at exit, after main's runtime.
struct PoolHolder {
  fiber::Pool pool{kWorkers};
  std::optional<fiber::AsyncResult<std::vector<int>>> unfinished;
};
std::unique_ptr<PoolHolder> holder;

}  // namespace

int main(int argc, char** argv) {
  const bool keep_unfinished_work = argc > 1 && std::strcmp(argv[1], "--unfinished") == 0;
  fiber::Runtime runtime(argc, argv);
  holder = std::make_unique<PoolHolder>();
  std::vector<int> numbers(kItems);
  for (int i = 0; i < kItems; ++i) numbers[i] = i;
  const auto squares = holder->pool.map(square, numbers);
  for (int i = 0; i < kItems; ++i) {
    if (squares[i] != i * i) {
      std::fprintf(stderr, "pool_outlives_runtime: square(%d) gave %d\n", i, squares[i]);
      return 1;
    }
  }
  if (keep_unfinished_work) {
    holder->unfinished = holder->pool.map_async(
        sleep_then, std::vector<std::tuple<int, int>>(kItems, {1, kForeverMs}), 1);
  }
  return 0;
}
