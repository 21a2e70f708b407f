// RunLog: append / reopen / truncate round trips, errors, metadata, locks, and readability by h5py
// and h5dump.
#include "storage/run_log.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "run_log_test_support.hpp"
#include "storage/checkpoint.hpp"
#include "test_support.hpp"

namespace fiber::rl::test {
namespace {

using Type = RunLog::Type;

TEST(RunLog, AppendCloseReopenRoundTripsExactly) {
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  {
    RunLog log = RunLog::create(path, es_columns());
    EXPECT_EQ(log.rows(), 0u);
    e = fill(log, 0, 2500);  // more than two chunks
    expect_rows(log, e);
  }
  RunLog log = RunLog::open(path, RunLog::Access::read_only);
  EXPECT_EQ(log.columns(), es_columns());  // names, types and order
  EXPECT_FALSE(log.writable());
  expect_rows(log, e);
  EXPECT_TRUE(log.has_column("seconds"));
  EXPECT_FALSE(log.has_column("nope"));
  // doubles() reads an int64 column too.
  EXPECT_EQ(log.doubles("generation")[2499], 2499.0);
  EXPECT_THROW(log.append({1, 2, 3.0, 4.0, 5.0, 6.0}), RunLogError);  // read-only
}

TEST(RunLog, AppendByName) {
  TempDir dir;
  const auto path = dir / "log.h5";
  RunLog log = RunLog::create(path, {{"generation", Type::int64}, {"return_mean", Type::float64}});
  log.append({{"return_mean", 1.5}, {"generation", 0}});
  RunLog::NamedRow row{{"generation", 1}, {"return_mean", 2}};  // an integer in a float64 column
  log.append(row);
  log.append(RunLog::Row{2, 3.5});
  log.append({3, 4});
  EXPECT_EQ(log.int64s("generation"), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(log.doubles("return_mean"), (std::vector<double>{1.5, 2.0, 3.5, 4.0}));
}

TEST(RunLog, BadRowsAreRejectedAndWriteNothing) {
  TempDir dir;
  const auto path = dir / "log.h5";
  RunLog log = RunLog::create(path, {{"generation", Type::int64}, {"return_mean", Type::float64}});
  log.append({0, 0.5});
  EXPECT_THROW(log.append({1}), std::invalid_argument);
  EXPECT_THROW(log.append({1, 2.0, 3.0}), std::invalid_argument);
  EXPECT_THROW(log.append(RunLog::Row{}), std::invalid_argument);
  EXPECT_THROW(log.append({{"generation", 1}, {"return_mean", 1.0}, {"bogus", 1.0}}),
               std::invalid_argument);
  EXPECT_THROW(log.append({{"generation", 1}}), std::invalid_argument);  // missing column
  EXPECT_THROW(log.append({1.5, 2.0}), std::invalid_argument);           // double in int64
  EXPECT_THROW(log.doubles("bogus"), std::invalid_argument);
  EXPECT_THROW(log.int64s("return_mean"), std::invalid_argument);
  EXPECT_THROW(RunLog::Value(std::numeric_limits<std::uint64_t>::max()), std::invalid_argument);
  try {
    log.append({1});
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("generation, return_mean"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(log.rows(), 1u);
  log.close();
  RunLog again = RunLog::open(path);
  EXPECT_EQ(again.rows(), 1u);
  EXPECT_EQ(again.int64s("generation"), std::vector<std::int64_t>{0});
  EXPECT_EQ(again.doubles("return_mean"), std::vector<double>{0.5});
}

TEST(RunLog, BadColumnDeclarations) {
  TempDir dir;
  EXPECT_THROW(RunLog::create(dir / "a.h5", {}), std::invalid_argument);
  EXPECT_THROW(RunLog::create(dir / "b.h5", {{"x", Type::int64}, {"x", Type::float64}}),
               std::invalid_argument);
  EXPECT_THROW(RunLog::create(dir / "c.h5", {{"a/b", Type::int64}}), std::invalid_argument);
  EXPECT_THROW(RunLog::create(dir / "d.h5", {{"", Type::int64}}), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "a.h5"));
}

TEST(RunLog, TruncateThenResumeLogsNoGenerationTwice) {
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  e = write_log(path, 10);
  {
    // The run crashed after generation 9, its last checkpoint was after generation 5.
    RunLog log = RunLog::open(path);
    EXPECT_EQ(log.rows(), 10u);
    EXPECT_THROW(log.truncate(11), std::invalid_argument);
    log.truncate(6);
    EXPECT_EQ(log.rows(), 6u);
  }
  RunLog log = RunLog::open(path);
  EXPECT_EQ(log.rows(), 6u);
  Expected resumed = fill(log, 6, 4);
  for (auto* v : {&e.generation, &e.timesteps}) v->resize(6);
  for (auto* v : {&e.mean, &e.min, &e.max, &e.seconds}) v->resize(6);
  e.generation.insert(e.generation.end(), resumed.generation.begin(), resumed.generation.end());
  e.timesteps.insert(e.timesteps.end(), resumed.timesteps.begin(), resumed.timesteps.end());
  e.mean.insert(e.mean.end(), resumed.mean.begin(), resumed.mean.end());
  e.min.insert(e.min.end(), resumed.min.begin(), resumed.min.end());
  e.max.insert(e.max.end(), resumed.max.begin(), resumed.max.end());
  e.seconds.insert(e.seconds.end(), resumed.seconds.begin(), resumed.seconds.end());
  log.close();
  RunLog reread = RunLog::open(path, RunLog::Access::read_only);
  expect_rows(reread, e);
  for (std::int64_t i = 0; i < 10; ++i) EXPECT_EQ(reread.int64s("generation")[i], i);
}

TEST(RunLog, TruncateToZeroAndAcrossChunks) {
  TempDir dir;
  const auto path = dir / "log.h5";
  RunLog log = RunLog::create(path, es_columns());
  fill(log, 0, 3000);
  log.truncate(1000);
  Expected tail = fill(log, 1000, 50);
  EXPECT_EQ(log.rows(), 1050u);
  EXPECT_EQ(log.int64s("generation")[1049], 1049);
  log.truncate(0);
  EXPECT_EQ(log.rows(), 0u);
  EXPECT_TRUE(log.doubles("return_mean").empty());
  Expected fresh = fill(log, 0, 3);
  expect_rows(log, fresh);
}

TEST(RunLog, CreateRefusesAnExistingFileUnlessOverwriting) {
  TempDir dir;
  const auto path = dir / "log.h5";
  write_log(path, 3);
  StderrCapture capture;
  expect_one_line_error(path, "already exists", "create over an existing log succeeded",
                        [&] { RunLog::create(path, es_columns()); });
  EXPECT_EQ(capture.text(), "");
  EXPECT_EQ(RunLog::open(path).rows(), 3u);  // untouched
  RunLog fresh = RunLog::create(path, {{"x", Type::float64}}, RunLog::IfExists::overwrite);
  EXPECT_EQ(fresh.rows(), 0u);
  EXPECT_EQ(fresh.columns().size(), 1u);
}

// A FIFO at the path is neither waited on (open(2) of a FIFO waits for its other end) nor
// replaced, whether the log is created, overwritten or opened; nor is a directory.
TEST(RunLog, AFifoOrADirectoryIsRefusedAtOnce) {
  TempDir dir;
  const auto fifo = dir / "fifo.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const auto if_exists : {RunLog::IfExists::fail, RunLog::IfExists::overwrite}) {
    expect_one_line_error(fifo, "is a FIFO, not a regular file", "created over a FIFO",
                          [&] { RunLog::create(fifo, es_columns(), if_exists); });
  }
  for (const auto access : {RunLog::Access::read_only, RunLog::Access::read_write}) {
    expect_one_line_error(fifo, "is a FIFO, not a regular file", "opened a FIFO",
                          [&] { RunLog::open(fifo, access); });
  }
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  const auto folder = dir / "folder.h5";
  std::filesystem::create_directory(folder);
  expect_one_line_error(folder, "is a directory, not a regular file", "created over a directory",
                        [&] { RunLog::create(folder, es_columns(), RunLog::IfExists::overwrite); });
  EXPECT_TRUE(std::filesystem::is_directory(folder));
}

TEST(RunLog, Metadata) {
  TempDir dir;
  const auto path = dir / "log.h5";
  std::string config;
  for (int i = 0; i < 5000; ++i) config += "key_" + std::to_string(i) + " = \"value\"\n";
  {
    RunLog log = RunLog::create(path, es_columns());
    log.set_meta("environment", "CartPole");
    log.set_meta("config", config);
    log.set_meta("hosts", "node1 node2");
    log.set_meta("hosts", "node1 node2 node3");  // replaced
    log.set_meta("empty", "");
    log.set_meta("unicode", "Ünïcödé ✓");
    EXPECT_THROW(log.set_meta("a/b", "x"), std::invalid_argument);
    EXPECT_THROW(log.set_meta("nul", std::string("a\0b", 3)), std::invalid_argument);
    EXPECT_EQ(log.meta("hosts"), "node1 node2 node3");
  }
  RunLog log = RunLog::open(path, RunLog::Access::read_only);
  EXPECT_EQ(log.meta("environment"), "CartPole");
  EXPECT_EQ(log.meta("config"), config);
  EXPECT_EQ(log.meta("empty"), "");
  EXPECT_EQ(log.meta("unicode"), "Ünïcödé ✓");
  EXPECT_EQ(log.meta("missing"), std::nullopt);
  const auto all = log.meta();
  EXPECT_EQ(all.size(), 5u);
  EXPECT_EQ(all.at("hosts"), "node1 node2 node3");
}

TEST(RunLog, ReadableByH5pyDuringAndAfterTheRunAndByH5dump) {
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  {
    RunLog log = RunLog::create(path, es_columns());
    log.set_meta("environment", "Pendulum");
    e = fill(log, 0, 40);
    // During the run: a reader without locking (as scripts/plot.py) sees every appended row.
    expect_h5py_sees(read_with_h5py(dir, path, false), e);
    // A locking reader is refused while the writer holds the file: no torn reads by accident.
    const auto locked = run_command(std::string(kPython) + " -c \"import h5py, sys; h5py.File(" +
                                    "sys.argv[1], 'r')\" " + quoted(path) + " 2>&1");
    EXPECT_NE(locked.exit_code, 0) << locked.output;
  }
  expect_h5py_sees(read_with_h5py(dir, path, true), e);
  const auto dump = run_command("h5dump -p " + quoted(path) + " 2>&1");
  EXPECT_EQ(dump.exit_code, 0) << dump.output;
  EXPECT_NE(dump.output.find("DATASET \"return_mean\""), std::string::npos);
  EXPECT_NE(dump.output.find("CHECKSUM FLETCHER32"), std::string::npos);
}

TEST(RunLog, OpenErrorsAreOneLineWithoutHdf5Noise) {
  TempDir dir;
  const auto garbage = dir / "garbage.h5";
  write_file(garbage, std::vector<char>(4096, 'x'));
  const auto checkpoint = dir / "checkpoint.h5";
  CheckpointWriter writer;
  writer.put("x", 1.0);
  writer.commit(checkpoint);

  const std::vector<std::pair<std::filesystem::path, std::string>> cases = {
      {dir / "missing.h5", "No such file"},
      {garbage, "not an HDF5 file"},
      {checkpoint, "not a fiber run log"},
  };
  for (const auto& [path, problem] : cases) {
    StderrCapture capture;
    expect_one_line_error(path, problem, path.string() + " opened", [&] { RunLog::open(path); });
    EXPECT_EQ(capture.text(), "") << path;
  }
}

// A read-only RunLog takes no lock (another process can open the file for writing meanwhile),
// and a second writer is refused while one holds the file.
TEST(RunLog, ReadersTakeNoLockAndASecondWriterIsRefused) {
  TempDir dir;
  const auto path = dir / "log.h5";
  write_log(path, 3);
  {
    RunLog reader = RunLog::open(path, RunLog::Access::read_only);
    const auto writer = run_command(
        std::string(kPython) + " -c \"import h5py, sys; h5py.File(sys.argv[1], 'r+').close()\" " +
        quoted(path) + " 2>&1");
    EXPECT_EQ(writer.exit_code, 0) << writer.output;
    EXPECT_EQ(reader.rows(), 3u);
  }
  // Another process holds the file open for writing (with HDF5's lock) for a moment.
  const auto script = dir / "hold.py";
  std::ofstream(script) << "import sys, time, h5py\n"
                           "f = h5py.File(sys.argv[1], 'r+')\n"
                           "print('open', flush=True)\n"
                           "time.sleep(1.5)\n";
  std::FILE* holder =
      ::popen((std::string(kPython) + " " + quoted(script) + " " + quoted(path)).c_str(), "r");
  ASSERT_NE(holder, nullptr);
  char line[16] = {};
  ASSERT_NE(std::fgets(line, sizeof line, holder), nullptr);
  EXPECT_STREQ(line, "open\n");
  {
    StderrCapture capture;
    expect_one_line_error(path, "in use by another process", "a second writer opened the log",
                          [&] { RunLog::open(path); });
    EXPECT_EQ(capture.text(), "");
  }
  {
    StderrCapture capture;
    try {
      RunLog::create(path, es_columns(), RunLog::IfExists::overwrite);
      ADD_FAILURE() << "overwrote a log in use";
    } catch (const RunLogError& error) {
      EXPECT_NE(std::string(error.what()).find("in use by another process"), std::string::npos)
          << error.what();
    }
    EXPECT_EQ(capture.text(), "");
  }
  ::pclose(holder);
  EXPECT_EQ(RunLog::open(path).rows(), 3u);  // intact, and free again
}

TEST(RunLog, SyncAndUseAfterClose) {
  TempDir dir;
  RunLog log = RunLog::create(dir / "log.h5", es_columns());
  fill(log, 0, 2);
  log.sync();
  log.close();
  EXPECT_THROW(log.rows(), RunLogError);
  EXPECT_THROW(log.append({1, 2, 3.0, 4.0, 5.0, 6.0}), RunLogError);
  log.close();  // closing twice is harmless
}

}  // namespace
}  // namespace fiber::rl::test
