// plan_reduction: blocks per host in name order and in proportion to the hosts' workers, cut
// into chunks; the same layout gives the same plan, whatever order the workers are listed in.
#include <gtest/gtest.h>

#include "reduction/reduction_plan.hpp"

namespace fiber::detail {
namespace {

std::vector<std::size_t> firsts(const std::vector<ReductionBlock>& blocks) {
  std::vector<std::size_t> result;
  for (const auto& block : blocks) result.push_back(block.first);
  return result;
}

TEST(ReductionPlan, BlocksFollowHostNamesAndWorkerCounts) {
  auto blocks = plan_reduction(100, {{"nodeB", 1}, {"nodeA", 3}}, 10);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].host, "nodeA");
  EXPECT_EQ(blocks[1].host, "nodeB");
  EXPECT_EQ(firsts(blocks), (std::vector<std::size_t>{0, 75}));
  EXPECT_EQ(blocks[0].chunk_ends, (std::vector<std::size_t>{10, 20, 30, 40, 50, 60, 70, 75}));
  EXPECT_EQ(blocks[1].chunk_ends, (std::vector<std::size_t>{10, 20, 25}));
}

TEST(ReductionPlan, TheSameLayoutListedOtherwiseGivesTheSamePlan) {
  auto one = plan_reduction(1001, {{"a", 1}, {"b", 1}, {"a", 1}, {"c", 2}}, 0);
  auto other = plan_reduction(1001, {{"c", 2}, {"a", 2}, {"b", 1}}, 0);
  ASSERT_EQ(one.size(), other.size());
  for (std::size_t b = 0; b < one.size(); ++b) {
    EXPECT_EQ(one[b].host, other[b].host);
    EXPECT_EQ(one[b].first, other[b].first);
    EXPECT_EQ(one[b].chunk_ends, other[b].chunk_ends);
  }
}

TEST(ReductionPlan, AutomaticChunksAreTwoPerWorker) {
  auto blocks = plan_reduction(601, {{"nodeA", 2}, {"nodeB", 2}, {"nodeC", 2}}, 0);
  EXPECT_EQ(firsts(blocks), (std::vector<std::size_t>{0, 200, 400}));
  EXPECT_EQ(blocks[0].chunk_ends, (std::vector<std::size_t>{50, 100, 150, 200}));
  EXPECT_EQ(blocks[2].chunk_ends, (std::vector<std::size_t>{51, 102, 153, 201}));
}

TEST(ReductionPlan, FewItemsLeaveHostsWithoutABlock) {
  auto blocks = plan_reduction(2, {{"a", 1}, {"b", 1}, {"c", 1}}, 0);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].host, "b");
  EXPECT_EQ(blocks[1].host, "c");
  for (const auto& block : blocks) EXPECT_EQ(block.chunk_ends, std::vector<std::size_t>{1});
}

TEST(ReductionPlan, NoHostMeansOneBlockForAny) {
  auto blocks = plan_reduction(5, {}, 2);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].host, "");
  EXPECT_EQ(blocks[0].chunk_ends, (std::vector<std::size_t>{2, 4, 5}));
}

}  // namespace
}  // namespace fiber::detail
