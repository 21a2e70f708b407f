// CPython's Pool cases (Lib/test/_test_multiprocessing.py) that no other fiber test covered,
// ported with the same assertions: test_map_unplicklable, test_map_handle_iterable_exception,
// test_make_pool, test_terminate, test_map_no_failfast and
// test_pool_worker_lifetime_early_close. test_worker_finalization_via_atexit_handler_of_
// multiprocessing needs a pool that outlives the runtime: tests/pool_outlives_runtime.cpp.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstddef>
#include <iterator>
#include <ranges>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/shared_pool_test.hpp"
#include "support/tasks.hpp"
#include "support/throwing_range.hpp"

// Python's exception raised by pickling A in test_map_unplicklable.
struct EncodeRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Python's class A whose __reduce__ raises: an argument that cannot be encoded (in the master).
struct Unencodable {
  template <class Archive>
  void serialize(Archive& /*archive*/, unsigned /*version*/) {
    throw EncodeRefused("this argument cannot be encoded");
  }
};
int take_unencodable(Unencodable /*ignored*/) { return 0; }
FIBER_TASK(take_unencodable);

namespace {

constexpr std::size_t kLargeMessageBytes = std::size_t{1} << 20;  // CPython's 1 MiB ValueError

}  // namespace

// Python's raise_large_valuerror(wait): sleeps `wait` seconds, then throws a 1 MiB message.
int raise_large_error(int wait_seconds) {
  std::this_thread::sleep_for(std::chrono::seconds(wait_seconds));
  throw std::invalid_argument(std::string(kLargeMessageBytes, 'x'));
}
FIBER_TASK(raise_large_error);

namespace {

using fiber_test::sleep_then;
using fiber_test::square;
using namespace std::chrono_literals;

using fiber_test::SayWhenError;
using fiber_test::ThrowingRange;

// Python's SpecialIterable: says it has one item, and throws when that item is read.
class SizedThrowingRange {
 public:
  class iterator {
   public:
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    int operator*() const { throw SayWhenError("Somebody said when"); }
    iterator& operator++() { return *this; }
    void operator++(int) {}
    bool operator==(std::default_sentinel_t) const { return false; }
  };

  iterator begin() const { return {}; }
  std::default_sentinel_t end() const { return {}; }
  std::size_t size() const { return 1; }
};
static_assert(std::ranges::sized_range<SizedThrowingRange>);

class PoolCpythonCases : public fiber_test::SharedPoolTest<PoolCpythonCases> {};

// The pool still runs tasks after an error in the caller's input.
void expect_pool_works(fiber::Pool& pool) { EXPECT_EQ(pool.apply(square, 4), 16); }

TEST_F(PoolCpythonCases, MapUnpicklable) {  // test_map_unplicklable
  const std::vector<Unencodable> items(10);
  // The encoder's own exception, in the caller: not a TaskError.
  EXPECT_THROW(pool->map(take_unencodable, items), EncodeRefused);
  EXPECT_THROW(pool->map_async(take_unencodable, items), EncodeRefused);
  expect_pool_works(*pool);
}

TEST_F(PoolCpythonCases, MapHandleIterableException) {  // test_map_handle_iterable_exception
  // SayWhenError seen at the very first of the iterable
  EXPECT_THROW(pool->map(square, ThrowingRange(1, -1), 1), SayWhenError);
  // again, make sure it's reentrant
  EXPECT_THROW(pool->map(square, ThrowingRange(1, -1), 1), SayWhenError);

  EXPECT_THROW(pool->map(square, ThrowingRange(10, 3), 1), SayWhenError);

  // a sized range (encoded after reserving its size) whose first item throws
  EXPECT_THROW(pool->map(square, SizedThrowingRange(), 1), SayWhenError);
  EXPECT_THROW(pool->map(square, SizedThrowingRange(), 1), SayWhenError);
  expect_pool_works(*pool);
}

TEST(PoolCpythonCasesMakePool, NegativeSizeIsRejected) {  // test_make_pool
  EXPECT_THROW(fiber::Pool({.processes = -1}), std::invalid_argument);
  EXPECT_THROW(fiber::Pool(-1), std::invalid_argument);
  fiber::Pool pool({.processes = 3});
  EXPECT_EQ(pool.size(), 3);
  EXPECT_THROW(pool.resize(-1), std::invalid_argument);
  EXPECT_EQ(pool.size(), 3);
}

// Longer than any task of these tests could wait without being killed.
constexpr int kForeverMs = 3'600'000;
// Only a hang takes this long (a bound on hangs, not on speed).
constexpr auto kHangBound = 60s;

TEST(PoolCpythonCasesTerminate, TerminateStopsTasksThatRunForever) {  // test_terminate
  constexpr int kWorkers = 3;
  constexpr int kTasks = 10'000;
  constexpr auto kLetTasksStart = 200ms;
  auto started = std::chrono::steady_clock::now();
  {
    fiber::Pool pool({.processes = kWorkers});
    // Simulate slow tasks which take "forever" to complete
    auto result =
        pool.map_async(sleep_then, std::vector<std::tuple<int, int>>(kTasks, {1, kForeverMs}), 1);
    std::this_thread::sleep_for(kLetTasksStart);
    pool.terminate();
    pool.join();
    EXPECT_LT(std::chrono::steady_clock::now() - started, kHangBound);
    EXPECT_THROW(result.get(), fiber::PoolClosed);
  }
  // The workers come back free: the task processes sleeping "forever" were killed.
  fiber::Pool next({.processes = kWorkers});
  EXPECT_EQ(next.apply_async(square, 5).get(kHangBound), 25);
}

TEST(PoolCpythonCasesNoFailfast, MapWaitsForEveryItemBeforeFailing) {  // test_map_no_failfast
  fiber::Pool pool({.processes = 2});
  try {
    pool.map(raise_large_error, std::vector<int>{0, 1}, 1);
    ADD_FAILURE() << "map did not throw";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.type(), "std::invalid_argument");
    EXPECT_EQ(error.message(), std::string(kLargeMessageBytes, 'x'));
  }
  // Make sure that the pool can be closed and joined without deadlocking.
  pool.close();
  pool.join();
  // Check that all tasks have been run (the second one raised after 1 s).
  EXPECT_EQ(pool.stats().tasks_failed, 2u);
}

TEST(PoolCpythonCasesWorkerLifetime, EarlyClose) {  // test_pool_worker_lifetime_early_close
  // Issue #10332: closing a pool whose workers have limited lifetimes before all the tasks
  // completed would make join() hang.
  constexpr int kTasks = 6;
  constexpr int kTaskMs = 300;
  fiber::Pool pool({.processes = 3, .maxtasksperchild = 1});
  std::vector<fiber::AsyncResult<int>> results;
  for (int i = 0; i < kTasks; ++i) results.push_back(pool.apply_async(sleep_then, i, kTaskMs));
  pool.close();
  pool.join();
  // check the results
  for (int i = 0; i < kTasks; ++i) {
    EXPECT_TRUE(results[i].ready()) << i;
    EXPECT_EQ(results[i].get(), i);
  }
}

}  // namespace
