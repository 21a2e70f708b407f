// The trainers' shared skeleton without a pool: a new run starts its log with its metadata, a
// resumed run loads its checkpoint and cuts its log back, a storage failure ends the run as one
// line and exit status 2, a stop checkpoints and returns kExitPreempted.
#include "run/training_session.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run/exit_status.hpp"
#include "run/stop_request.hpp"
#include "storage/checkpoint.hpp"
#include "storage/error.hpp"
#include "test_support.hpp"

namespace fiber::rl {
namespace {

using test::TempDir;

constexpr int kCheckpointEvery = 10;

TrainingProgram program() {
  return {"test-trainer",
          "generation",
          {{"generation", RunLog::Type::int64}, {"return_mean", RunLog::Type::float64}}};
}

RunFiles files_in(const TempDir& dir, const std::string& resume = "") {
  RunFiles files((dir / "log.h5").string());
  files.checkpoint = (dir / "log.ckpt.h5").string();
  files.checkpoint_every = kCheckpointEvery;
  files.resume = resume;
  return files;
}

// Runs a new session over `files` that logs `rows` generations.
void run_new(const RunFiles& files, int rows) {
  TrainingSession session(program(), files, false);
  const int status = session.run([&] {
    session.claim([](const std::string& checkpoint) { FAIL() << "loaded " << checkpoint; });
    EXPECT_FALSE(session.resuming());
    RunLog& log = session.open_log(0, {{"config", "seed = 1"}});
    for (int g = 0; g < rows; ++g) log.append({g, 0.5 * g});
    return 0;
  });
  EXPECT_EQ(status, 0);
}

TEST(TrainingSession, ANewRunStartsItsLogWithItsMetadata) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  run_new(files, 3);
  const RunLog log = RunLog::open(files.output, RunLog::Access::read_only);
  EXPECT_EQ(log.rows(), 3u);
  EXPECT_EQ(log.columns(), program().columns);
  EXPECT_EQ(log.meta("config"), "seed = 1");
  EXPECT_EQ(log.meta("hosts"), "");                               // no pool in this test
  EXPECT_FALSE(std::filesystem::exists(files.output + ".lock"));  // released
}

TEST(TrainingSession, AResumedRunLoadsItsCheckpointAndCutsItsLogBack) {
  TempDir dir;
  run_new(files_in(dir), 3);
  const RunFiles files = files_in(dir, "auto");
  CheckpointWriter checkpoint;
  checkpoint.put("generation", std::int64_t{2});
  checkpoint.commit(files.checkpoint);

  TrainingSession session(program(), files, false);
  std::string loaded;
  testing::internal::CaptureStdout();
  const int status = session.run([&] {
    session.claim([&](const std::string& path) { loaded = path; });
    EXPECT_TRUE(session.resuming());
    EXPECT_EQ(session.open_log(2, {{"config", "ignored when resuming"}}).rows(), 2u);
    return 0;
  });
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 0);
  EXPECT_EQ(loaded, files.checkpoint);
  EXPECT_EQ(out, "test-trainer: resumed from " + files.checkpoint + " at generation 2\n");
  EXPECT_EQ(session.log().meta("config"), "seed = 1");
}

TEST(TrainingSession, AStorageErrorEndsTheRunAsOneLineAndBadInput) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  TrainingSession session(program(), files, false);
  testing::internal::CaptureStderr();
  const int status = session.run([]() -> int { throw RunLogError("run log x.h5: damaged"); });
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "test-trainer: run log x.h5: damaged\n");
  EXPECT_EQ(status, kExitBadInput);
}

TEST(TrainingSession, AnExistingOutputIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  run_new(files, 1);
  const auto before = std::filesystem::last_write_time(files.output);
  TrainingSession session(program(), files, false);
  testing::internal::CaptureStderr();
  const int status = session.run([&] {
    session.claim([](const std::string&) {});
    ADD_FAILURE() << "claimed an existing output";
    return 0;
  });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, kExitBadInput);
  EXPECT_EQ(err.rfind("test-trainer: ", 0), 0u) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_EQ(std::filesystem::last_write_time(files.output), before);
}

TEST(TrainingSession, AStopCheckpointsAndReturnsPreempted) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  TrainingSession session(program(), files, false);
  bool saved = false;
  testing::internal::CaptureStdout();
  EXPECT_EQ(session.stop(5, [&] { saved = true; }), kExitPreempted);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(saved);
  EXPECT_NE(out.find(" after 5 generations; checkpoint " + files.checkpoint +
                     "; resume with --resume auto\n"),
            std::string::npos)
      << out;
}

TEST(TrainingSession, ACheckpointIsDueEveryNStepsAndAtTheEnd) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  const TrainingSession session(program(), files, false);
  EXPECT_TRUE(session.checkpoint_due(kCheckpointEvery, 100));
  EXPECT_TRUE(session.checkpoint_due(2 * kCheckpointEvery, 100));
  EXPECT_FALSE(session.checkpoint_due(kCheckpointEvery + 1, 100));
  EXPECT_TRUE(session.checkpoint_due(kCheckpointEvery + 1, kCheckpointEvery + 1));
}

}  // namespace
}  // namespace fiber::rl
