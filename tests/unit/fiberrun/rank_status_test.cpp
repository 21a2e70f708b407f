// The ranks' status records (fiberrun/rank_status.hpp): how each rank's program ended, as
// fiberrun's rank supervisor writes it and fiberrun reads it back into the job's status.
#include "fiberrun/rank_status.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using fiberrun::RankState;

TEST(RankState, ShellStatusIsTheExitCodeOr128PlusTheSignal) {
  EXPECT_EQ((RankState{RankState::Kind::exited, 0}.shell_status()), 0);
  EXPECT_EQ((RankState{RankState::Kind::exited, 3}.shell_status()), 3);
  EXPECT_EQ((RankState{RankState::Kind::signaled, SIGSEGV}.shell_status()), 128 + SIGSEGV);
  EXPECT_EQ((RankState{RankState::Kind::running, 1234}.shell_status()), 128 + SIGKILL);
  EXPECT_EQ(fiberrun::describe_signal({RankState::Kind::signaled, SIGKILL}),
            "killed by SIGKILL (exit 137)");
  EXPECT_EQ(fiberrun::describe_signal({RankState::Kind::exited, 1}), "");
}

class RankStatusFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "fiber-unit-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    folder_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::filesystem::path folder_;
};

TEST_F(RankStatusFolder, StatesRoundTripAndTheLowestFailedRankGivesTheStatus) {
  fiberrun::write_rank_state(folder_, 0, {RankState::Kind::running, 4242});
  fiberrun::write_rank_state(folder_, 1, {RankState::Kind::exited, 0});
  fiberrun::write_rank_state(folder_, 2, {RankState::Kind::signaled, SIGTERM});
  fiberrun::write_rank_state(folder_, 3, {RankState::Kind::exited, 5});
  auto ranks = fiberrun::read_rank_states(folder_);
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks.at(0).kind, RankState::Kind::running);
  EXPECT_EQ(ranks.at(0).value, 4242);
  EXPECT_EQ(ranks.at(2).kind, RankState::Kind::signaled);
  EXPECT_EQ(fiberrun::job_status(ranks), 128 + SIGKILL);  // rank 0 never said how it ended
  fiberrun::write_rank_state(folder_, 0, {RankState::Kind::exited, 0});
  EXPECT_EQ(fiberrun::job_status(fiberrun::read_rank_states(folder_)), 128 + SIGTERM);
}

TEST_F(RankStatusFolder, OtherFilesAndPartialWritesAreNotRanks) {
  std::ofstream(folder_ / "0.partial") << "exit 1\n";
  std::ofstream(folder_ / "notes") << "exit 1\n";
  std::ofstream(folder_ / "7") << "garbage";
  EXPECT_TRUE(fiberrun::read_rank_states(folder_).empty());
  EXPECT_EQ(fiberrun::job_status({}), 0);
}

TEST_F(RankStatusFolder, AMissingFolderIsNoRanks) {
  fiberrun::write_rank_state(folder_ / "gone", 0, {RankState::Kind::exited, 1});
  EXPECT_TRUE(fiberrun::read_rank_states(folder_ / "gone").empty());
}

}  // namespace
