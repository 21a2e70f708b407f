// A task that throws, an unknown task, a closed or terminated pool: clear errors, and the pool
// keeps working.
#include <gtest/gtest.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "support/tasks.hpp"

namespace {

struct SimulatorDiverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

int fail_with(int kind) {
  switch (kind) {
    case 0:
      throw std::runtime_error("plain runtime error");
    case 1:
      throw std::invalid_argument("bad argument 17");
    case 2:
      throw SimulatorDiverged("state became NaN at step 3");
    case 3:
      throw 42;
    default:
      return kind;
  }
}
FIBER_TASK(fail_with);

int registered_late(int x) { return x; }

namespace {

using fiber_test::sleep_then;
using fiber_test::square;

TEST(TaskErrors, CarryTypeMessageAndWorker) {
  fiber::Pool pool({.processes = 1});
  struct Case {
    int kind;
    std::string type;
    std::string message;
  };
  std::vector<Case> cases{
      {0, "std::runtime_error", "plain runtime error"},
      {1, "std::invalid_argument", "bad argument 17"},
      {2, "(anonymous namespace)::SimulatorDiverged", "state became NaN at step 3"},
      {3, "int", "(not a std::exception)"}};
  auto worker = pool.workers().at(0);
  for (const auto& c : cases) {
    try {
      pool.apply(fail_with, c.kind);
      ADD_FAILURE() << "no error for kind " << c.kind;
    } catch (const fiber::TaskError& error) {
      EXPECT_EQ(error.task(), "fail_with");
      EXPECT_EQ(error.type(), c.type);
      EXPECT_EQ(error.message(), c.message);
      EXPECT_EQ(error.worker().pid, worker.pid);
      EXPECT_EQ(error.worker().host, worker.host);
      EXPECT_NE(error.worker().pid, static_cast<long>(getpid()));
      std::string what = error.what();
      EXPECT_NE(what.find(c.type), std::string::npos) << what;
      EXPECT_NE(what.find(worker.host), std::string::npos) << what;
    }
  }
  EXPECT_EQ(pool.apply(fail_with, 9), 9);  // the pool goes on
}

TEST(TaskErrors, MapThrowsFirstFailureOthersStillComputed) {
  fiber::Pool pool({.processes = 2});
  std::vector<int> kinds{5, 6, 1, 7, 0, 8};
  EXPECT_THROW(pool.map(fail_with, kinds, 1), fiber::TaskError);
  try {
    pool.map(fail_with, kinds, 2);
    ADD_FAILURE() << "no error from a map in chunks of 2";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.type(), "std::invalid_argument");  // item 2 fails before item 4
  }
  // imap raises at the failing item and can go on after it.
  auto stream = pool.imap(fail_with, kinds);
  EXPECT_EQ(stream.next(), 5);
  EXPECT_EQ(stream.next(), 6);
  EXPECT_THROW(stream.next(), fiber::TaskError);
  EXPECT_EQ(stream.next(), 7);
  auto pending = pool.map_async(fail_with, kinds);
  pending.wait();
  EXPECT_FALSE(pending.successful());
  EXPECT_EQ(pool.map(square, std::vector<int>{1, 2, 3}), (std::vector<int>{1, 4, 9}));
}

TEST(TaskErrors, UnknownTaskNameIsATaskError) {
  // Registered after the workers started: they do not know it.
  fiber::register_task<&registered_late>("registered_late");
  fiber::Pool pool({.processes = 1});
  try {
    pool.apply(registered_late, 1);
    ADD_FAILURE() << "no error for an unknown task";
  } catch (const fiber::TaskError& error) {
    EXPECT_EQ(error.type(), "fiber::UnknownTask");
    EXPECT_NE(std::string(error.what()).find("registered_late"), std::string::npos);
  }
  fiber::Task<int(int)> by_name{"no_such_task"};
  EXPECT_THROW(pool.apply(by_name, 1), fiber::TaskError);
  EXPECT_EQ(pool.apply(fiber::Task<int(int)>{"fiber_test::square"}, 6), 36);
}

TEST(TaskErrors, ResultOfAnotherTypeIsATypeMismatchNamingTheTask) {
  fiber::Pool pool({.processes = 1});
  // fiber_test::square returns an int: read as a string (archive) or as a double (raw bytes).
  for (auto call :
       {+[](fiber::Pool& p) { p.apply(fiber::Task<std::string(int)>{"fiber_test::square"}, 3); },
        +[](fiber::Pool& p) { p.apply(fiber::Task<double(int)>{"fiber_test::square"}, 3); },
        +[](fiber::Pool& p) {
          p.map(fiber::Task<std::vector<int>(int)>{"fiber_test::square"}, std::vector<int>{1, 2});
        }}) {
    try {
      call(pool);
      ADD_FAILURE() << "a result of another type was accepted";
    } catch (const fiber::TypeMismatch& error) {
      std::string what = error.what();
      EXPECT_NE(what.find("fiber_test::square"), std::string::npos) << what;
      EXPECT_NE(what.find("result"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(pool.apply(fiber::Task<int(int)>{"fiber_test::square"}, 4), 16);
}

int never_registered(int x) { return x; }

TEST(TaskErrors, UnregisteredFunctionIsRejectedAtTheCall) {
  fiber::Pool pool({.processes = 1});
  try {
    pool.apply(never_registered, 1);
    ADD_FAILURE();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("FIBER_TASK"), std::string::npos);
  }
}

TEST(PoolState, ClosedPoolThrowsJoinWaits) {
  fiber::Pool pool({.processes = 2});
  auto pending = pool.apply_async(sleep_then, 3, 200);
  EXPECT_THROW(pool.join(), std::logic_error);  // join needs close first
  pool.close();
  EXPECT_THROW(pool.map(square, std::vector<int>{1}), fiber::PoolClosed);
  EXPECT_THROW(pool.apply_async(square, 1), fiber::PoolClosed);
  pool.join();
  EXPECT_TRUE(pending.ready());
  EXPECT_EQ(pending.get(), 3);
}

TEST(PoolState, TerminateFailsPendingWorkWithPoolClosed) {
  fiber::Pool pool({.processes = 1});
  std::vector<std::tuple<int, int>> calls(20, {1, 100});
  auto pending = pool.map_async(sleep_then, calls, 1);
  pool.terminate();
  EXPECT_THROW(pending.get(), fiber::PoolClosed);
  EXPECT_THROW(pool.apply(square, 2), fiber::PoolClosed);
  pool.join();
  fiber::Pool next({.processes = 1});  // the worker comes back free
  EXPECT_EQ(next.apply(square, 5), 25);
}

TEST(PoolState, DestroyingAPoolWithWorkLeftCancelsIt) {
  std::optional<fiber::AsyncResult<std::vector<int>>> pending;
  {
    fiber::Pool pool({.processes = 1});
    pending = pool.map_async(sleep_then, std::vector<std::tuple<int, int>>(50, {1, 50}), 1);
  }
  EXPECT_THROW(pending->get(), fiber::PoolClosed);
}

}  // namespace
