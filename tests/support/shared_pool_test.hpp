// A test suite whose tests share one pool of two workers, made before the suite's first test and
// destroyed after its last: starting a pool is most of a small test's time. Suite is the fixture
// itself (each suite gets its own pool); Base is ::testing::Test or a TestWithParam<T>.
//
//   class PoolImap : public fiber_test::SharedPoolTest<PoolImap> {};
#pragma once

#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

namespace fiber_test {

template <class Suite, class Base = ::testing::Test>
class SharedPoolTest : public Base {
 protected:
  static constexpr int kWorkers = 2;
  static void SetUpTestSuite() { pool = new fiber::Pool({.processes = kWorkers}); }
  static void TearDownTestSuite() {
    delete pool;
    pool = nullptr;
  }
  static inline fiber::Pool* pool = nullptr;
};

}  // namespace fiber_test
