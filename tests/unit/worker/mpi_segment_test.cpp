// Which of a worker's mappings is its own Open MPI segment (worker/mpi_segment.hpp).
#include "worker/mpi_segment.hpp"

#include <gtest/gtest.h>

namespace {

using fiber::detail::is_own_mpi_segment;

TEST(MpiSegment, OwnSegmentIsThatOfItsHostAndLocalRank) {
  EXPECT_TRUE(is_own_mpi_segment("/dev/shm/vader_segment.nodeB.0.4b070002.3", "nodeB", "3"));
  EXPECT_TRUE(
      is_own_mpi_segment("/dev/shm/vader_segment.node7.1000.4b070002.12", "node7.cluster", "12"));
}

TEST(MpiSegment, AnotherProcesssOrHostsOrFileIsNot) {
  EXPECT_FALSE(is_own_mpi_segment("/dev/shm/vader_segment.nodeB.0.4b070002.13", "nodeB", "3"));
  EXPECT_FALSE(is_own_mpi_segment("/dev/shm/vader_segment.nodeB.0.4b070002.3", "nodeB", "13"));
  EXPECT_FALSE(is_own_mpi_segment("/dev/shm/vader_segment.nodeBB.0.4b070002.3", "nodeB", "3"));
  EXPECT_FALSE(is_own_mpi_segment("/dev/shm/fiber.nodeB-1.nodeB.table", "nodeB", "3"));
  EXPECT_FALSE(is_own_mpi_segment("/dev/shm/vader_segment.nodeB.3", "nodeB", "3"));
  EXPECT_FALSE(is_own_mpi_segment("/dev/shm/vader_segment.nodeB.0.4b070002.3", "nodeB", ""));
}

}  // namespace
