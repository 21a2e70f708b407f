// Which cores and devices a shaped worker gets on its node (dispatch/worker_placement.cpp), and
// the lists they travel as (id_list.cpp).
#include "dispatch/worker_placement.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "id_list.hpp"

namespace fiber::detail {
namespace {

TEST(IdList, ReadsNumbersAndRangesAndWritesThemBack) {
  EXPECT_EQ(parse_id_list("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(parse_id_list(""), std::vector<int>{});
  EXPECT_EQ(parse_id_list("5"), std::vector<int>{5});
  EXPECT_EQ(format_id_list({0, 1, 7}), "0,1,7");
  EXPECT_EQ(parse_id_list(format_id_list({2, 4})), (std::vector<int>{2, 4}));
}

TEST(IdList, RefusesWhatIsNotAList) {
  for (const char* bad : {"a", "1,", "3-1", "-1", "1-", "0,,1", "1.5"}) {
    EXPECT_THROW(parse_id_list(bad), std::invalid_argument) << bad;
  }
}

TEST(WorkerPlacement, EachWorkerOfANodeGetsCoresAndDevicesNoOtherHolds) {
  NodeOffer node{"nodeB", {0, 1, 2, 3}, {0, 1}};
  WorkerShape shape{.cores = 2, .memory_bytes = 1 << 20, .gpus = 1};
  std::string missing;
  auto first = place(shape, node, {}, missing);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(first->gpus, std::vector<int>{0});
  EXPECT_EQ(first->shape, shape);
  auto second = place(shape, node, {&*first}, missing);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(second->gpus, std::vector<int>{1});
  EXPECT_FALSE(place(shape, node, {&*first, &*second}, missing));
  EXPECT_EQ(missing, "nodeB has 0 of its 4 cores free, a worker needs 2");
}

TEST(WorkerPlacement, ANodeWithFewerDevicesThanAskedIsNamed) {
  std::string missing;
  EXPECT_FALSE(place({.gpus = 2}, {"nodeC", {0, 1}, {0}}, {}, missing));
  EXPECT_EQ(missing, "nodeC has 1 of its 1 GPUs free, a worker needs 2");
  EXPECT_FALSE(place({.gpus = 1}, {"nodeA", {0, 1}, {}}, {}, missing));
  EXPECT_NE(missing.find("nodeA has no GPUs"), std::string::npos) << missing;
}

TEST(WorkerPlacement, TheDefaultShapeTakesNothing) {
  std::string missing;
  auto placement = place({}, {"nodeA", {}, {}}, {}, missing);
  ASSERT_TRUE(placement);
  EXPECT_TRUE(placement->cpus.empty());
  EXPECT_TRUE(placement->gpus.empty());
  EXPECT_EQ(slots_of({}), 1);
  EXPECT_EQ(slots_of({.cores = 4}), 4);
}

}  // namespace
}  // namespace fiber::detail
