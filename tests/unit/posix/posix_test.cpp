// The owners of descriptors and mappings (posix/): each gives back what it holds, once.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <utility>

#include "posix/mapped_region.hpp"
#include "posix/unique_fd.hpp"
#include "support/process_resources.hpp"

namespace {

using fiber::posix::MappedRegion;
using fiber::posix::UniqueFd;

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFd, ClosesWhatItHoldsWhenItGoes) {
  int raw = -1;
  {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    raw = fd.get();
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, AMoveHandsItOverAndResetClosesTheOldOne) {
  UniqueFd first(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int raw = first.get();
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first);
  EXPECT_EQ(second.get(), raw);
  UniqueFd third(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int replaced = third.get();
  third = std::move(second);
  EXPECT_FALSE(is_open(replaced));
  EXPECT_EQ(third.get(), raw);
  EXPECT_TRUE(is_open(raw));
  int released = third.release();
  EXPECT_FALSE(third);
  EXPECT_TRUE(is_open(released));
  ::close(released);
}

TEST(UniqueFd, APipeIsTwoOwnedEnds) {
  std::size_t before = fiber::unit::open_file_descriptors();
  {
    auto pipe = fiber::posix::open_pipe(O_CLOEXEC);
    ASSERT_TRUE(pipe);
    EXPECT_EQ(fiber::unit::open_file_descriptors(), before + 2);
    EXPECT_EQ(::write(pipe->write.get(), "x", 1), 1);
    char got = 0;
    EXPECT_EQ(::read(pipe->read.get(), &got, 1), 1);
    EXPECT_EQ(got, 'x');
  }
  EXPECT_EQ(fiber::unit::open_file_descriptors(), before);
}

TEST(MappedRegion, IsSharedZeroedMemoryUnmappedWhenItGoes) {
  std::size_t before = fiber::unit::shared_anonymous_mappings();
  {
    auto region = MappedRegion::shared_anonymous(sizeof(long));
    ASSERT_TRUE(region);
    EXPECT_EQ(region->size(), sizeof(long));
    long value = -1;
    std::memcpy(&value, region->data(), sizeof value);
    EXPECT_EQ(value, 0);
    EXPECT_EQ(fiber::unit::shared_anonymous_mappings(), before + 1);
    MappedRegion moved = std::move(*region);
    EXPECT_FALSE(*region);
    EXPECT_TRUE(moved);
    moved = std::move(moved);  // a region moved onto itself keeps its mapping
    EXPECT_TRUE(moved);
    EXPECT_EQ(fiber::unit::shared_anonymous_mappings(), before + 1);
  }
  EXPECT_EQ(fiber::unit::shared_anonymous_mappings(), before);
}

}  // namespace
