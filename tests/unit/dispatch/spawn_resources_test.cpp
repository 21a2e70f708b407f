#include "dispatch/spawn_resources.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

// Lowers this process's soft descriptor limit for one test, and puts it back.
class DescriptorLimit {
 public:
  explicit DescriptorLimit(rlim_t soft) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    struct rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~DescriptorLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  struct rlimit saved_ {};
};

std::string refusal(int first_id, int count, int live) {
  try {
    check_spawn_resources(first_id, count, live);
  } catch (const SpawnError& error) {
    return error.what();
  }
  return {};
}

TEST(SpawnResources, AFewWorkersFitTheUsualLimits) { EXPECT_EQ(refusal(0, 4, 1), ""); }

TEST(SpawnResources, TooManyWorkersForTheDescriptorLimitAreRefused) {
  DescriptorLimit limit(64);
  auto said = refusal(0, 16, 1);
  EXPECT_NE(said.find("cannot start workers 0 to 15"), std::string::npos) << said;
  EXPECT_NE(said.find("the limit is 64 (ulimit -n)"), std::string::npos) << said;
}

TEST(SpawnResources, AMasterAtItsDescriptorLimitStartsNoWorker) {
  rlim_t open = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++open;
  }
  DescriptorLimit limit(open - 1);  // (less the iterator's own): not one more can be opened
  auto said = refusal(0, 1, 1);
  EXPECT_NE(said.find("cannot start worker 0: the master would need"), std::string::npos) << said;
}

TEST(SpawnResources, MoreWorkersThanDevShmHoldsAreRefusedOnOneMachine) {
  struct statvfs space {};
  ASSERT_EQ(statvfs("/dev/shm", &space), 0);
  std::uint64_t free = std::uint64_t{space.f_bavail} * space.f_frsize;
  // 4,212 KiB a worker: one more worker than /dev/shm holds (checked before the descriptors).
  int too_many = static_cast<int>(free / (std::uint64_t{4212} * 1024)) + 1;
  setenv("FIBER_LOCAL", "1", 1);
  auto said = refusal(3, too_many, 4);
  unsetenv("FIBER_LOCAL");
  EXPECT_NE(said.find("of /dev/shm for each"), std::string::npos) << said;
  EXPECT_NE(said.find("cannot start workers 3 to"), std::string::npos) << said;
  // Not on a cluster: which workers land on this node is mpirun's choice.
  setenv("FIBER_LOCAL", "0", 1);
  said = refusal(3, too_many, 4);
  unsetenv("FIBER_LOCAL");
  EXPECT_EQ(said.find("/dev/shm"), std::string::npos) << said;
}

}  // namespace
}  // namespace fiber::detail
