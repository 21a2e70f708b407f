// A pool whose workers cannot start for want of this host's resources is a fiber::SpawnError that
// says which, raised before anything is spawned: an MPI_Comm_spawn whose processes fail in MPI's
// start-up never returns on Open MPI 4.1 (docs/platform.md, "A spawn that cannot start never
// returns"). tests/spawn_resources.sh runs each case under the limit it needs.
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <fiber/fiber.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "support/tasks.hpp"

namespace {

// Run under `ulimit -n 64`: 16 workers need more descriptors than that (Open MPI's launcher
// alone takes about 3 for each process it starts here); a pool of 1 still starts.
TEST(SpawnResources, TooFewFileDescriptorsIsASpawnError) {
  try {
    fiber::Pool pool({.processes = 16});
    ADD_FAILURE() << "started " << pool.size() << " workers with 64 file descriptors";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("ulimit -n"), std::string::npos) << error.what();
  }
  fiber::Pool pool({.processes = 1});
  EXPECT_EQ(pool.apply(fiber_test::square, 4), 16);
}

// Run with a /dev/shm of its own, small: a NodeArray takes all of it but 1 MiB, less than one
// worker's MPI start-up needs there.
TEST(SpawnResources, FullDevShmIsASpawnError) {
  constexpr std::uint64_t kLeftFree = 1 << 20;
  struct statvfs space {};
  ASSERT_EQ(statvfs("/dev/shm", &space), 0);
  std::uint64_t free = std::uint64_t{space.f_bavail} * space.f_frsize;
  // (The segment's header page comes on top of the array.)
  ASSERT_GT(free, 2 * kLeftFree);
  auto filler = fiber::NodeArray<char>::open(
      "filler", free - kLeftFree - 4096,
      [](std::span<char> bytes) { std::memset(bytes.data(), 0, bytes.size()); });
  try {
    fiber::Pool pool({.processes = 4});
    ADD_FAILURE() << "started " << pool.size() << " workers with 1 MiB free in /dev/shm";
  } catch (const fiber::SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("/dev/shm"), std::string::npos) << error.what();
  }
}

}  // namespace
