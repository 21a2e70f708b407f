// The trainers' shared skeleton without a pool: a new run starts its log with its metadata, a
// resumed run loads its checkpoint and cuts its log back, a run's log and checkpoints carry its
// id and a resume refuses another run's checkpoint, a file at --checkpoint is replaced only if it
// is the run's own (or with --overwrite), a FIFO or a directory as a run's file is refused at
// once, a storage failure ends the run as one line and exit status 2, a stop checkpoints and
// returns kExitPreempted; a clean end or a stop compresses the logs (unless --no-compress-logs).
#include "run/training_session.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "run/checkpoint_start.hpp"
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
    session.claim(
        [](const CheckpointReader& checkpoint) { FAIL() << "loaded " << checkpoint.path(); });
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
    session.claim([&](const CheckpointReader& reader) { loaded = reader.path(); });
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

// Runs a session over `files` (new, or resumed with files.resume) that logs generations up to
// `rows` and checkpoints after the last; returns its exit status, and its stderr in `err`.
int run_checkpointed(const RunFiles& files, int rows, bool overwrite = false,
                     std::string* err = nullptr) {
  TrainingSession session(program(), files, overwrite);
  std::int64_t done = 0;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int status = session.run([&] {
    session.claim(
        [&](const CheckpointReader& checkpoint) { done = checkpoint.int64("generation"); });
    RunLog& log = session.open_log(done, {});
    for (std::int64_t g = done; g < rows; ++g) log.append({g, 0.5 * static_cast<double>(g)});
    CheckpointWriter checkpoint;
    checkpoint.put("generation", std::int64_t{rows});
    session.commit_checkpoint(checkpoint);
    return 0;
  });
  testing::internal::GetCapturedStdout();
  const std::string captured = testing::internal::GetCapturedStderr();
  if (err != nullptr) *err = captured;
  return status;
}

std::string run_id_of_log(const std::string& path) {
  return RunLog::open(path, RunLog::Access::read_only).meta(kRunIdKey).value_or("");
}

std::string run_id_of_checkpoint(const std::string& path) {
  return CheckpointReader(path).string(kRunIdKey);
}

// One line naming the program, as run() writes it.
bool one_line(const std::string& err) {
  return err.rfind("test-trainer: ", 0) == 0 && err.find('\n') == err.size() - 1;
}

TEST(TrainingSession, TheLogAndTheCheckpointsOfARunCarryItsId) {
  TempDir dir;
  ASSERT_EQ(run_checkpointed(files_in(dir), 2), 0);
  const std::string id = run_id_of_log(files_in(dir).output);
  EXPECT_EQ(id.size(), 32u) << id;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(run_id_of_checkpoint(files_in(dir).checkpoint), id);
  // Resumed, it keeps its id, and may replace its own checkpoint resumed from a copy.
  std::filesystem::copy_file(files_in(dir).checkpoint, dir / "copy.ckpt.h5");
  ASSERT_EQ(run_checkpointed(files_in(dir, (dir / "copy.ckpt.h5").string()), 4), 0);
  EXPECT_EQ(run_id_of_log(files_in(dir).output), id);
  EXPECT_EQ(run_id_of_checkpoint(files_in(dir).checkpoint), id);
  EXPECT_EQ(CheckpointReader(files_in(dir).checkpoint).int64("generation"), 4);
  // Another run's id differs.
  TempDir other;
  ASSERT_EQ(run_checkpointed(files_in(other), 1), 0);
  EXPECT_NE(run_id_of_log(files_in(other).output), id);
}

// A new run whose --checkpoint holds a file: refused before anything is written, whether the file
// is not a checkpoint or another run's; --overwrite replaces it.
TEST(TrainingSession, ANewRunRefusesAFileAtItsCheckpointUnlessOverwrite) {
  TempDir dir;
  ASSERT_EQ(run_checkpointed(files_in(dir), 2), 0);
  RunFiles files = files_in(dir);
  files.output = (dir / "other.h5").string();  // the checkpoint is log.h5's
  std::string err;
  EXPECT_EQ(run_checkpointed(files, 1, false, &err), kExitBadInput);
  EXPECT_TRUE(one_line(err)) << err;
  EXPECT_NE(err.find("holds the checkpoint of another run"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(files.output));
  EXPECT_EQ(CheckpointReader(files.checkpoint).int64("generation"), 2);

  files.checkpoint = (dir / "notes.txt").string();
  test::write_file(files.checkpoint, std::vector<char>(10, 'n'));
  EXPECT_EQ(run_checkpointed(files, 1, false, &err), kExitBadInput);
  EXPECT_TRUE(one_line(err)) << err;
  EXPECT_NE(err.find("exists and is not a checkpoint"), std::string::npos) << err;
  EXPECT_EQ(std::filesystem::file_size(files.checkpoint), 10u);

  EXPECT_EQ(run_checkpointed(files, 1, true, &err), 0) << err;
  EXPECT_EQ(CheckpointReader(files.checkpoint).int64("generation"), 1);
}

// A resume continues a log only from a checkpoint of its own run: another run's checkpoint, by
// --resume or replaced at --checkpoint, is refused and the log left as it was.
TEST(TrainingSession, AResumeRefusesAnotherRunsCheckpoint) {
  TempDir dir, other;
  ASSERT_EQ(run_checkpointed(files_in(dir), 2), 0);
  ASSERT_EQ(run_checkpointed(files_in(other), 2), 0);
  const auto before = std::filesystem::last_write_time(files_in(dir).output);
  std::string err;
  EXPECT_EQ(run_checkpointed(files_in(dir, files_in(other).checkpoint), 3, false, &err),
            kExitBadInput);
  EXPECT_TRUE(one_line(err)) << err;
  EXPECT_NE(err.find("checkpoint " + files_in(other).checkpoint +
                     " is another run's than the log " + files_in(dir).output),
            std::string::npos)
      << err;
  std::filesystem::copy_file(files_in(other).checkpoint, files_in(dir).checkpoint,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(run_checkpointed(files_in(dir, "auto"), 3, false, &err), kExitBadInput);
  EXPECT_NE(err.find("is another run's than the log"), std::string::npos) << err;
  EXPECT_EQ(std::filesystem::last_write_time(files_in(dir).output), before);
  EXPECT_EQ(RunLog::open(files_in(dir).output, RunLog::Access::read_only).rows(), 2u);
}

// A FIFO at any of the run's paths is refused at once, never opened (which would wait for a
// writer), whatever the flags; so is a directory.
TEST(TrainingSession, AFifoOrADirectoryAsARunsFileIsRefusedAtOnce) {
  TempDir dir;
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::filesystem::create_directory(dir / "folder");
  for (const std::string& path : {fifo, (dir / "folder").string()}) {
    for (const bool overwrite : {false, true}) {
      RunFiles files = files_in(dir);
      files.checkpoint = path;
      std::string err;
      EXPECT_EQ(run_checkpointed(files, 1, overwrite, &err), kExitBadInput);
      EXPECT_TRUE(one_line(err)) << err;
      EXPECT_NE(err.find("--checkpoint " + path + " is a"), std::string::npos) << err;
      files = files_in(dir);
      files.output = path;
      EXPECT_EQ(run_checkpointed(files, 1, overwrite, &err), kExitBadInput);
      EXPECT_NE(err.find("--output " + path + " is a"), std::string::npos) << err;
      EXPECT_EQ(run_checkpointed(files_in(dir, path), 1, overwrite, &err), kExitBadInput);
      EXPECT_NE(err.find("--resume " + path + " is a"), std::string::npos) << err;
    }
  }
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_FALSE(std::filesystem::exists(files_in(dir).output));
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
    session.claim([](const CheckpointReader&) {});
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
    session.claim(
        [](const CheckpointReader& checkpoint) { FAIL() << "loaded " << checkpoint.path(); });
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
