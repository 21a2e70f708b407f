// RunLog after a crash (run_log_recovery.cpp): a writer killed between or in the middle of appends
// loses no counted row, a chunk torn by a crashed append is repaired, and any other damage is
// refused with the file left as it was.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "run_log_test_support.hpp"
#include "storage/run_log.hpp"
#include "test_support.hpp"

namespace fiber::rl::test {
namespace {

// A process killed between appends loses nothing that append() returned from.
TEST(RunLog, KilledWriterLosesNoAppendedRow) {
  TempDir dir;
  const auto path = dir / "log.h5";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      RunLog log = RunLog::create(path, es_columns());
      fill(log, 0, 100);
    } catch (...) {
      ::_exit(3);
    }
    ::raise(SIGKILL);  // no close, no destructors, no exit handlers
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << WEXITSTATUS(status);
  RunLog log = RunLog::open(path);
  ASSERT_EQ(log.rows(), 100u);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_EQ(log.int64s("generation")[i], i);
  EXPECT_EQ(bits(log.doubles("return_mean")[99]), bits(awkward(99)));
}

// A process killed at a random moment (possibly inside an append) leaves a log that opens, whose
// rows are all complete and in order.
TEST(RunLog, KilledWriterMidAppendLeavesConsistentRows) {
  for (int round = 0; round < 3; ++round) {
    TempDir dir;
    const auto path = dir / "log.h5";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        RunLog log = RunLog::create(path, es_columns());
        fill(log, 0, 5);
        const char byte = 'r';
        if (::write(ready[1], &byte, 1) != 1) ::_exit(4);
        for (int i = 5;; ++i) fill(log, i, 1);
      } catch (...) {
        ::_exit(3);
      }
    }
    ::close(ready[1]);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the writer failed before its first rows";
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 60 * round));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    StderrCapture capture;
    RunLog log = RunLog::open(path);
    const std::size_t rows = log.rows();
    EXPECT_GE(rows, 5u);
    Expected e;
    {
      TempDir scratch;  // the same rows, written without a crash
      RunLog reference = RunLog::create(scratch / "reference.h5", es_columns());
      e = fill(reference, 0, static_cast<int>(rows));
    }
    expect_rows(log, e);
    fill(log, static_cast<int>(rows), 1);  // and it can go on
    EXPECT_EQ(log.rows(), rows + 1);
    EXPECT_EQ(capture.text(), "");
  }
}

// A row that Fletcher32 finds damaged is refused when the log is opened for writing (resume),
// naming the column and rows, and the file is left as it was: a fresh checksum would make the
// wrong value pass for a good one.
TEST(RunLog, CorruptedRowIsRefusedAndTheFileLeftAsItWas) {
  TempDir dir;
  const auto path = dir / "log.h5";
  write_log(path, 1500);  // two chunks per column
  const std::uint64_t offset = first_chunk_offset(path, "return_mean");
  overwrite_bytes(path, offset + 3 * sizeof(double), sizeof(double), 0x7f);
  const std::vector<char> damaged = read_file(path);
  StderrCapture capture;
  expect_one_line_error(path, "checksum mismatch in /log/return_mean, rows 0-1023",
                        "a corrupted log opened for writing", [&] { RunLog::open(path); });
  EXPECT_EQ(capture.text(), "");
  EXPECT_TRUE(read_file(path) == damaged) << "the refused log was changed";
  EXPECT_THROW(RunLog::open(path, RunLog::Access::read_only).doubles("return_mean"), RunLogError);
}

// What a crash inside an append leaves, a chunk whose new row was written in part and whose
// checksum is still the one before, is repaired: the counted rows are intact.
TEST(RunLog, ChunkTornByACrashedAppendIsRepaired) {
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  e = write_log(path, 5);
  const std::uint64_t offset = first_chunk_offset(path, "seconds");
  overwrite_bytes(path, offset + 5 * sizeof(double), sizeof(double) / 2, 0x3f);  // row 5
  StderrCapture capture;
  RunLog log = RunLog::open(path);
  expect_rows(log, e);
  fill(log, 5, 1);
  EXPECT_EQ(log.rows(), 6u);
  EXPECT_EQ(capture.text(), "");
}

// Each column's first chunk as stored, "byte_offset size" (h5py, without taking the lock, as the
// log's readers do while the run writes it).
std::string stored_chunks(const std::filesystem::path& path) {
  const auto result =
      run_command(std::string("HDF5_USE_FILE_LOCKING=FALSE ") + kPython +
                  " -c \"import h5py, sys\nwith h5py.File(sys.argv[1], 'r') as f:\n" +
                  "  for ds in f['log'].values():\n    c = ds.id.get_chunk_info(0)\n" +
                  "    print(c.byte_offset, c.size)\" " + quoted(path) + " 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return result.output;
}

// What the crash repair rests on: an append rewrites the last chunk of each column in place
// (uncompressed chunks keep their size, so HDF5 never moves them nor reuses their place).
TEST(RunLog, AppendsRewriteChunksInPlace) {
  TempDir dir;
  const auto path = dir / "log.h5";
  RunLog log = RunLog::create(path, es_columns());
  fill(log, 0, 1);
  const std::string before = stored_chunks(path);
  EXPECT_NE(before, "");
  fill(log, 1, 20);
  log.append_rows({{21, 0, 1.0, 2.0, 3.0, 4.0}, {22, 0, 1.0, 2.0, 3.0, 4.0}});
  EXPECT_EQ(stored_chunks(path), before);
}

}  // namespace
}  // namespace fiber::rl::test
