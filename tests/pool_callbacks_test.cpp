// callback and error_callback of apply_async, map_async and starmap_async: Python's semantics
// (CPython's test_map_async_callbacks, test_async_error_callback and the error half of
// test_unpickleable_result, ported), on one result-handler thread, before get() and wait()
// return.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "support/shared_pool_test.hpp"
#include "support/tasks.hpp"

int parse_int(std::string text) { return std::stoi(text); }  // Python's int('a'): ValueError
FIBER_TASK(parse_int);

int raising() { throw std::out_of_range("key"); }  // Python's KeyError
FIBER_TASK(raising);

void nothing() {}
FIBER_TASK(nothing);

// Python's unpickleable_result: a result that cannot be encoded (on the worker).
struct Unencodable {
  template <class Archive>
  void serialize(Archive& /*archive*/, unsigned /*version*/) {
    throw std::runtime_error("this result cannot be encoded");
  }
};
Unencodable unencodable_result() { return {}; }
FIBER_TASK(unencodable_result);

namespace {

using fiber_test::add;
using fiber_test::sleep_then;
using fiber_test::square;
using namespace std::chrono_literals;

// The TaskError type name of an error passed to an error_callback.
std::string task_error_type(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const fiber::TaskError& task_error) {
    return task_error.type();
  } catch (...) {
    return "not a fiber::TaskError";
  }
}

class PoolCallbacks : public fiber_test::SharedPoolTest<PoolCallbacks> {};

TEST_F(PoolCallbacks, MapAsyncCallbacks) {  // test_map_async_callbacks
  using CallArg = std::variant<std::vector<int>, std::exception_ptr>;
  std::vector<CallArg> call_args;
  auto append_result = [&](const std::vector<int>& r) { call_args.emplace_back(r); };
  auto append_error = [&](std::exception_ptr e) { call_args.emplace_back(e); };
  pool->map_async(parse_int, std::vector<std::string>{"1"},
                  {.callback = append_result, .error_callback = append_error})
      .wait();
  ASSERT_EQ(call_args.size(), 1u);
  EXPECT_EQ(std::get<std::vector<int>>(call_args[0]), std::vector<int>{1});
  pool->map_async(parse_int, std::vector<std::string>{"a"},
                  {.callback = append_result, .error_callback = append_error})
      .wait();
  ASSERT_EQ(call_args.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<std::exception_ptr>(call_args[1]));
  EXPECT_EQ(task_error_type(std::get<std::exception_ptr>(call_args[1])), "std::invalid_argument");
}

TEST_F(PoolCallbacks, AsyncErrorCallback) {  // test_async_error_callback
  std::exception_ptr scratchpad;
  auto result =
      pool->apply_async({.error_callback = [&](std::exception_ptr e) { scratchpad = e; }}, raising);
  try {
    result.get();
    ADD_FAILURE() << "get() did not throw";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.type(), "std::out_of_range");
  }
  ASSERT_TRUE(scratchpad);
  EXPECT_EQ(task_error_type(scratchpad), "std::out_of_range");
}

TEST_F(PoolCallbacks, UnencodableResult) {  // test_unpickleable_result, its error half
  // Make sure we don't lose pool processes because of encoding errors.
  for (int iteration = 0; iteration < 20; ++iteration) {
    std::exception_ptr scratchpad;
    auto result = pool->apply_async(
        {.error_callback = [&](std::exception_ptr e) { scratchpad = e; }}, unencodable_result);
    EXPECT_THROW(result.get(), fiber::TaskError);
    ASSERT_TRUE(scratchpad);
    EXPECT_EQ(task_error_type(scratchpad), "std::runtime_error");
  }
  EXPECT_EQ(pool->size(), 2);
  EXPECT_EQ(pool->apply(square, 4), 16);
}

TEST_F(PoolCallbacks, CallbackHasRunWhenGetReturns) {
  std::atomic<bool> called{false};
  auto result = pool->apply_async({.callback =
                                       [&](int value) {
                                         std::this_thread::sleep_for(50ms);  // a slow callback
                                         called = value == 49;
                                       }},
                                  square, 7);
  EXPECT_EQ(result.get(), 49);
  EXPECT_TRUE(called);
  EXPECT_TRUE(result.ready());
}

TEST_F(PoolCallbacks, WaitWithTimeoutWaitsForTheCallbackToo) {
  std::atomic<bool> release{false};
  auto result = pool->apply_async({.callback =
                                       [&](int) {
                                         while (!release) std::this_thread::sleep_for(1ms);
                                       }},
                                  square, 3);
  EXPECT_FALSE(result.wait(100ms));  // the result is there, its callback has not finished
  EXPECT_FALSE(result.ready());
  release = true;
  EXPECT_TRUE(result.wait(60s));
  EXPECT_TRUE(result.ready());
}

TEST_F(PoolCallbacks, AllOnOneThreadThatIsNotTheCallers) {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<int> values;
  std::vector<fiber::AsyncResult<int>> results;
  for (int i = 0; i < 50; ++i) {
    results.push_back(pool->apply_async({.callback =
                                             [&](int value) {
                                               std::lock_guard lock(mutex);
                                               threads.insert(std::this_thread::get_id());
                                               values.push_back(value);
                                             }},
                                        sleep_then, i, i % 3));
  }
  for (auto& result : results) result.wait();
  std::lock_guard lock(mutex);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
  std::multiset<int> got(values.begin(), values.end());
  std::multiset<int> expected;
  for (int i = 0; i < 50; ++i) expected.insert(i);
  EXPECT_EQ(got, expected);
}

TEST_F(PoolCallbacks, StarmapAsyncAndVoidTasks) {
  std::vector<int> sums;
  pool->starmap_async(add, std::vector<std::tuple<int, int>>{{1, 2}, {3, 4}}, 1,
                      {.callback = [&](const std::vector<int>& r) { sums = r; }})
      .get();
  EXPECT_EQ(sums, (std::vector<int>{3, 7}));
  bool called = false;
  pool->apply_async({.callback = [&] { called = true; }}, nothing).get();
  EXPECT_TRUE(called);
}

TEST_F(PoolCallbacks, EmptyMapCallsBackAtOnce) {
  bool called = false;
  auto result =
      pool->map_async(square, std::vector<int>{},
                      {.callback = [&](const std::vector<int>& r) { called = r.empty(); }});
  result.wait();
  EXPECT_TRUE(called);
}

// A callback that throws is reported (one line, checked by CTest's expect_log_line) and stops
// neither the pool nor the other callbacks.
TEST_F(PoolCallbacks, ThrowingCallbackIsReportedAndIgnored) {
  std::atomic<int> called{0};
  std::vector<fiber::AsyncResult<int>> results;
  for (int i = 0; i < 10; ++i) {
    results.push_back(pool->apply_async({.callback =
                                             [&](int value) {
                                               ++called;
                                               if (value % 2 == 0) {
                                                 throw std::runtime_error("callback refused");
                                               }
                                             }},
                                        square, i));
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(results[i].get(), i * i);
  EXPECT_EQ(called, 10);
  EXPECT_EQ(pool->map(square, std::vector<int>{5, 6}), (std::vector<int>{25, 36}));
}

// The pool terminated with work pending: each pending call's error_callback gets PoolClosed.
TEST(PoolCallbacksTerminate, PendingCallsGetPoolClosed) {
  std::atomic<int> closed{0};
  std::vector<fiber::AsyncResult<int>> results;
  {
    fiber::Pool pool({.processes = 1});
    for (int i = 0; i < 5; ++i) {
      results.push_back(pool.apply_async({.error_callback =
                                              [&](std::exception_ptr error) {
                                                try {
                                                  std::rethrow_exception(error);
                                                } catch (const fiber::PoolClosed&) {
                                                  ++closed;
                                                }
                                              }},
                                         sleep_then, i, 2000));
    }
    pool.terminate();
  }
  for (auto& result : results) EXPECT_THROW(result.get(), fiber::PoolClosed);
  EXPECT_EQ(closed, 5);
}

}  // namespace
