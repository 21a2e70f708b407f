// Without oversubscription (FIBER_OVERSUBSCRIBE=0, set by CTest), asking for more workers than
// the machine's slots, or a worker of more cores than are free, is a clear fiber::SpawnError, and
// the runtime goes on.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <string>
#include <thread>

#include "support/tasks.hpp"

namespace {

TEST(Oversubscription, MoreWorkersThanSlotsIsASpawnError) {
  int slots = static_cast<int>(std::thread::hardware_concurrency());
  try {
    fiber::Pool pool({.processes = slots + 2});
    ADD_FAILURE() << "started " << pool.size() << " workers on " << slots << " slots";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("FIBER_OVERSUBSCRIBE=1"), std::string::npos)
        << error.what();
  }
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(fiber_test::square, 4), 16);
  EXPECT_THROW(pool.resize(slots + 2), fiber::SpawnError);
  EXPECT_EQ(pool.apply(fiber_test::square, 5), 25);
}

TEST(Oversubscription, AWorkerOfSeveralCoresTakesAsManySlots) {
  int slots = static_cast<int>(std::thread::hardware_concurrency());
  // The master takes one slot (and the worker parked by the test before, another): a worker of
  // all the cores does not fit beside them.
  try {
    fiber::Pool pool({.processes = 1, .shape = {.cores = slots}});
    ADD_FAILURE() << "a worker of " << slots << " cores started beside the master";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("takes " + std::to_string(slots) + " slots"),
              std::string::npos)
        << error.what();
  }
  fiber::Pool pool({.processes = 1});  // the runtime goes on
  EXPECT_EQ(pool.apply(fiber_test::square, 7), 49);
}

}  // namespace
