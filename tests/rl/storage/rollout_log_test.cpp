// RolloutLog and RunLog::append_rows: a step's rows counted together, resumed runs cut back to
// their checkpoint's step, and hosts as indices into /meta/hosts.
#include "storage/rollout_log.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "test_support.hpp"

namespace fiber::rl {
namespace {

using test::TempDir;
using Type = RunLog::Type;

std::vector<RunLog::Column> columns() {
  return {{"generation", Type::int64}, {"return", Type::float64}, {"host", Type::int64}};
}

TEST(RolloutLog, AppendsAStepsRowsTogether) {
  TempDir dir;
  const auto path = RolloutLog::path_beside(dir.path() / "run.h5");
  EXPECT_EQ(path.filename(), "run.rollouts.h5");
  RolloutLog log = RolloutLog::create(path, columns(), "generation");
  log.append_step({{0, 1.5, log.host_index("a")}, {0, 2.5, log.host_index("b")}});
  EXPECT_EQ(log.log().rows(), 2u);
  // A float in the int64 column: refused, nothing of the step written.
  EXPECT_THROW(log.append_step({{1, 1.0, 0}, {1.5, 1.0, 0}}), std::invalid_argument);
  EXPECT_EQ(log.log().rows(), 2u);
  EXPECT_EQ(log.log().meta("hosts"), "a,b");
  EXPECT_EQ(log.host_index("a"), 0);
}

TEST(RolloutLog, ResumeDropsTheStepsAfterTheCheckpoint) {
  TempDir dir;
  const auto path = dir.path() / "run.rollouts.h5";
  {
    RolloutLog log = RolloutLog::create(path, columns(), "generation");
    for (int g = 0; g < 4; ++g) log.append_step({{g, 1.0, 0}, {g, 2.0, 0}, {g, 3.0, 0}});
  }
  // Other columns (another --rollout-log): refused, before anything is cut.
  EXPECT_THROW(RolloutLog::resume(path, {{"generation", Type::int64}}, "generation", 1),
               RunLogError);
  RolloutLog log = RolloutLog::resume(path, columns(), "generation", 2);
  EXPECT_EQ(log.log().int64s("generation"), (std::vector<std::int64_t>{0, 0, 0, 1, 1, 1}));
}

// A compressed rollout log (a run that ended cleanly) resumes: decompressed, cut back, appended
// to. Resumed with other columns it is refused, and left exactly as it was.
TEST(RolloutLog, CompressedLogResumesAndARefusedOneIsLeftAsItWas) {
  TempDir dir;
  const auto path = dir.path() / "run.rollouts.h5";
  {
    RolloutLog log = RolloutLog::create(path, columns(), "generation");
    for (int g = 0; g < 4; ++g) log.append_step({{g, 1.0, log.host_index("a")}, {g, 2.0, 0}});
    log.log().close_compressed();
  }
  const std::vector<char> compressed = test::read_file(path);
  EXPECT_THROW(RolloutLog::resume(path, {{"generation", Type::int64}}, "generation", 1),
               RunLogError);
  EXPECT_TRUE(test::read_file(path) == compressed) << "the refused log was changed";
  {
    RolloutLog log = RolloutLog::resume(path, columns(), "generation", 3);
    log.append_step({{3, 4.0, log.host_index("b")}});
    EXPECT_EQ(log.log().int64s("generation"), (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2, 3}));
    EXPECT_EQ(log.log().meta("hosts"), "a,b");
    log.log().close_compressed();
  }
  EXPECT_LT(std::filesystem::file_size(path), compressed.size() + compressed.size() / 2);
  EXPECT_EQ(RunLog::open(path, RunLog::Access::read_only).doubles("return").back(), 4.0);
}

}  // namespace
}  // namespace fiber::rl
