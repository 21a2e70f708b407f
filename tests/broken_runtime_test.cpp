// A runtime whose dispatcher fails (a bug, MPI broken as a whole) is broken, as mpi4py.futures'
// executor: every pending result fails with a fiber::Error naming the cause, later calls throw the
// same, and the program can still save its work and exit. CTest runs it with the failpoint
// FIBER_FAILPOINT_BREAK_AFTER_RESULTS set (dispatch/dispatcher.hpp), so the dispatcher fails mid-map.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/tasks.hpp"

namespace {

void expect_broken(const fiber::Error& error) {
  std::string what = error.what();
  EXPECT_NE(what.find("broke down"), std::string::npos) << what;
  EXPECT_NE(what.find("FIBER_FAILPOINT_BREAK_AFTER_RESULTS"), std::string::npos) << what;
}

TEST(BrokenRuntime, FailsPendingWorkAndEveryLaterCallButLetsTheProgramFinish) {
  ASSERT_NE(std::getenv("FIBER_FAILPOINT_BREAK_AFTER_RESULTS"), nullptr) << "run it through CTest";
  fiber::Pool pool({.processes = 2});
  auto pending = pool.apply_async(fiber_test::sleep_then, 1, 3000);
  std::vector<std::tuple<int, int>> items;
  for (int i = 0; i < 30; ++i) items.emplace_back(i, 20);
  try {
    pool.starmap(fiber_test::sleep_then, items, 1);
    ADD_FAILURE() << "the map completed through a broken dispatcher";
  } catch (const fiber::Error& error) {
    expect_broken(error);
  }
  try {
    pending.get();
    ADD_FAILURE() << "a result pending when it broke was delivered";
  } catch (const fiber::Error& error) {
    expect_broken(error);
  }
  try {
    pool.apply(fiber_test::square, 2);
    ADD_FAILURE() << "a broken runtime took new work";
  } catch (const fiber::Error& error) {
    expect_broken(error);
  }
  try {
    fiber::Pool another({.processes = 1});
    ADD_FAILURE() << "a broken runtime opened a pool";
  } catch (const fiber::Error& error) {
    expect_broken(error);
  }
  // What a program does next: save what it has (here a file), then end (the runtime's end must
  // not hang; CTest's timeout says if it does).
  auto saved = std::filesystem::temp_directory_path() / "fiber-broken-runtime-saved";
  std::ofstream(saved) << "checkpoint";
  EXPECT_TRUE(std::filesystem::exists(saved));
  std::filesystem::remove(saved);
}

}  // namespace
