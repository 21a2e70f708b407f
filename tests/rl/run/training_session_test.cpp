// The trainers' shared skeleton without a pool: a new run starts its log with its metadata, a
// resumed run loads its checkpoint and cuts its log back, a storage failure ends the run as one
// line and exit status 2, a stop checkpoints and returns kExitPreempted; a clean end or a stop
// compresses the logs (unless --no-compress-logs).
#include "run/training_session.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <functional>
#include <string>

#include "run/exit_status.hpp"
#include "run/stop_request.hpp"
#include "storage/checkpoint.hpp"
#include "storage/error.hpp"
#include "storage/rollout_log.hpp"
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
  EXPECT_EQ(session.stop(5, [&] { saved = true; }, {}), kExitPreempted);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(saved);
  EXPECT_NE(out.find(" after 5 generations; checkpoint " + files.checkpoint +
                     "; resume with --resume auto\n"),
            std::string::npos)
      << out;
}

// True if /log/generation of the log at `path` is deflated (HDF5's C API; the file must not be
// open in this process).
bool deflated(const std::string& path) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, "log/generation", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(dataset);
  unsigned flags = 0;
  std::size_t values = 0;
  unsigned config = 0;
  const bool found = H5Pget_filter_by_id2(dcpl, H5Z_FILTER_DEFLATE, &flags, &values, nullptr, 0,
                                          nullptr, &config) >= 0;
  H5Pclose(dcpl);
  H5Dclose(dataset);
  H5Fclose(file);
  return found;
}

// A session over `files` that logs 3 generations, with a rollout log, and ends with `end`.
void run_and_end(const RunFiles& files,
                 const std::function<void(TrainingSession&, RolloutLog&)>& end) {
  TrainingSession session(program(), files, false);
  const int status = session.run([&] {
    session.claim([](const std::string& checkpoint) { FAIL() << "loaded " << checkpoint; });
    RunLog& log = session.open_log(0, {});
    RolloutLog rollouts =
        RolloutLog::create(RolloutLog::path_beside(files.output), program().columns, "generation");
    for (int g = 0; g < 3; ++g) {
      rollouts.append_step({{g, 1.0}, {g, 2.0}});
      log.append({g, 0.5 * g});
    }
    end(session, rollouts);
    return 0;
  });
  EXPECT_EQ(status, 0);
}

TEST(TrainingSession, ACleanEndCompressesTheLogsUnlessTurnedOff) {
  for (const bool compress : {true, false}) {
    TempDir dir;
    RunFiles files = files_in(dir);
    files.compress_logs = compress;
    testing::internal::CaptureStdout();
    run_and_end(files, [](TrainingSession& session, RolloutLog& rollouts) {
      session.close_logs({&rollouts});
    });
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string rollout_path = RolloutLog::path_beside(files.output).string();
    EXPECT_EQ(deflated(files.output), compress);
    EXPECT_EQ(deflated(rollout_path), compress);
    EXPECT_EQ(out.find("test-trainer: compressed 2 logs in ") != std::string::npos, compress)
        << out;
    EXPECT_EQ(RunLog::open(files.output, RunLog::Access::read_only).rows(), 3u);
    EXPECT_EQ(RunLog::open(rollout_path, RunLog::Access::read_only).rows(), 6u);
  }
}

// A log that cannot be compressed (a folder in the way of its copy) is one warning line; the run
// still ends well, that log whole and uncompressed, the others compressed.
TEST(TrainingSession, ALogThatCannotBeCompressedIsAWarning) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  std::filesystem::create_directories(files.output + ".tmp/keep");
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  run_and_end(files, [](TrainingSession& session, RolloutLog& rollouts) {
    session.close_logs({&rollouts});
  });
  testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("test-trainer: warning: run log " + files.output + ": cannot compress", 0),
            0u)
      << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_FALSE(deflated(files.output));
  EXPECT_EQ(RunLog::open(files.output, RunLog::Access::read_only).rows(), 3u);
  EXPECT_TRUE(deflated(RolloutLog::path_beside(files.output).string()));
}

TEST(TrainingSession, AStopCompressesTheLogsAfterTheCheckpoint) {
  TempDir dir;
  const RunFiles files = files_in(dir);
  testing::internal::CaptureStdout();
  run_and_end(files, [&](TrainingSession& session, RolloutLog& rollouts) {
    bool open_at_the_checkpoint = false;
    EXPECT_EQ(
        session.stop(3, [&] { open_at_the_checkpoint = session.log().writable(); }, {&rollouts}),
        kExitPreempted);
    EXPECT_TRUE(open_at_the_checkpoint);
    EXPECT_THROW(session.log().rows(), RunLogError);  // closed, compressed
  });
  testing::internal::GetCapturedStdout();
  EXPECT_TRUE(deflated(files.output));
  EXPECT_TRUE(deflated(RolloutLog::path_beside(files.output).string()));
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
