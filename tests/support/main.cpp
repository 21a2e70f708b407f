// The main of every test executable: the fiber::Runtime first (in a spawned worker it serves
// tasks and never returns), then GoogleTest in the master.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
