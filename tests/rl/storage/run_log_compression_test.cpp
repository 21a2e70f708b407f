// RunLog's compressed copy (run_log_compression.cpp): close_compressed() and the decompression of
// a log opened for writing keep every row, metadata and attribute; a damaged compressed chunk, a
// killed rewrite or a copy that cannot be written leave the log whole.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "run_log_test_support.hpp"
#include "storage/run_log.hpp"
#include "test_support.hpp"

namespace fiber::rl::test {
namespace {

// The filters of each column as h5py sees them (without taking the lock: also while the log is
// open), one line per column: "name compression level shuffle fletcher32 chunks maxshape".
std::string h5py_filters(const std::filesystem::path& path) {
  const auto result = run_command(
      std::string("HDF5_USE_FILE_LOCKING=FALSE ") + kPython +
      " -c \"import h5py, sys\nwith h5py.File(sys.argv[1], 'r') as f:\n" +
      "  for name, d in f['log'].items():\n" +
      "    print(name, d.compression, d.compression_opts, d.shuffle, d.fletcher32, d.chunks, " +
      "d.maxshape)\" " + quoted(path) + " 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return result.output;
}

// The filters of /log/<column> in their order (HDF5's C API; the log must not be open in this
// process, which would refuse another open of it with other access properties).
std::vector<H5Z_filter_t> filters_of(const std::filesystem::path& path, const std::string& column) {
  std::vector<H5Z_filter_t> filters;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, ("log/" + column).c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(dataset);
  for (int k = 0; k < H5Pget_nfilters(dcpl); ++k) {
    unsigned flags = 0;
    std::size_t values = 0;
    unsigned config = 0;
    filters.push_back(H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &values, nullptr, 0,
                                     nullptr, &config));
  }
  H5Pclose(dcpl);
  H5Dclose(dataset);
  H5Fclose(file);
  return filters;
}

const std::vector<H5Z_filter_t> kCompressedFilters{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE,
                                                   H5Z_FILTER_FLETCHER32};
const std::vector<H5Z_filter_t> kUncompressedFilters{H5Z_FILTER_FLETCHER32};

// close_compressed() replaces the log by a compressed copy: shuffle, deflate, Fletcher32 in that
// order, chunked and extendible as before, with the same rows, metadata and root attributes,
// read by RunLog and h5py as before; no temporary file is left.
TEST(RunLog, CloseCompressedKeepsRowsAndMetaWithShuffleDeflateFletcher32) {
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  {
    RunLog log = RunLog::create(path, es_columns());
    log.set_meta("environment", "Pendulum");
    e = fill(log, 0, 1500);  // two chunks per column
    log.close_compressed();
    EXPECT_THROW(log.rows(), RunLogError);  // closed
  }
  EXPECT_EQ(filters_of(path, "return_mean"), kCompressedFilters);
  const std::string filters = h5py_filters(path);
  EXPECT_NE(filters.find("generation gzip 6 True True (1024,) (None,)\n"), std::string::npos)
      << filters;
  EXPECT_NE(filters.find("seconds gzip 6 True True (1024,) (None,)\n"), std::string::npos)
      << filters;
  EXPECT_FALSE(std::filesystem::exists(dir / "log.h5.tmp"));
  const RunLog log = RunLog::open(path, RunLog::Access::read_only);
  expect_rows(log, e);
  EXPECT_EQ(log.columns(), es_columns());  // in their order
  EXPECT_EQ(log.meta("environment"), "Pendulum");
  expect_h5py_sees(read_with_h5py(dir, path, true), e);
  // The awkward values compress little; a real log's columns far more (benchmarks/rollout_log).
  EXPECT_LT(std::filesystem::file_size(path), 6 * 1500 * sizeof(double));
}

TEST(RunLog, CloseCompressedNeedsAWritableLog) {
  TempDir dir;
  const auto path = dir / "log.h5";
  write_log(path, 3);
  {
    RunLog reader = RunLog::open(path, RunLog::Access::read_only);
    EXPECT_THROW(reader.close_compressed(), RunLogError);
  }
  EXPECT_EQ(filters_of(path, "generation"), kUncompressedFilters);
}

// A compressed log (by close_compressed() or h5repack) opened for writing is first replaced by an
// uncompressed copy, then resumed as any log: cut back, appended to, and compressed again at the
// end, with every row once.
TEST(RunLog, CompressedLogIsDecompressedWhenOpenedForWriting) {
  TempDir dir;
  const auto path = dir / "log.h5";
  const auto repacked = dir / "repacked.h5";
  {
    RunLog log = RunLog::create(path, es_columns());
    log.set_meta("environment", "Pendulum");
    fill(log, 0, 1500);
  }
  const auto pack = run_command("h5repack -f SHUF -f GZIP=6 -f FLET " + quoted(path) + " " +
                                quoted(repacked) + " 2>&1");
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  { RunLog(RunLog::open(path)).close_compressed(); }
  Expected reference;
  {
    RunLog log = RunLog::create(dir / "reference.h5", es_columns());
    reference = fill(log, 0, 1600);
  }
  for (const auto& file : {path, repacked}) {
    StderrCapture capture;
    {
      RunLog log = RunLog::open(file);
      EXPECT_NE(h5py_filters(file).find("return_max None None False True (1024,) (None,)\n"),
                std::string::npos)
          << file;
      EXPECT_EQ(log.meta("environment"), "Pendulum");
      log.truncate(1200);  // resumed from a checkpoint after row 1199
      fill(log, 1200, 400);
      log.close_compressed();
    }
    EXPECT_EQ(capture.text(), "");
    EXPECT_EQ(filters_of(file, "return_max"), kCompressedFilters) << file;
    expect_rows(RunLog::open(file, RunLog::Access::read_only), reference);
    EXPECT_FALSE(std::filesystem::exists(file.string() + ".tmp"));
  }
}

// A damaged chunk of a compressed log is found by its checksum: a reader gets one line naming the
// column, and opening it for writing is refused in one line before anything is changed.
TEST(RunLog, DamagedCompressedChunkIsRefusedAndTheFileLeftAsItWas) {
  constexpr std::uint64_t kInsideTheStream = 10;  // past zlib's 2-byte header
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  {
    RunLog log = RunLog::create(path, es_columns());
    e = fill(log, 0, 1500);
    log.close_compressed();
  }
  flip_byte(path, first_chunk_offset(path, "return_mean") + kInsideTheStream);
  const std::vector<char> damaged = read_file(path);
  StderrCapture capture;
  expect_one_line_error(path, "damaged (checksum mismatch in /log/return_mean",
                        "a damaged compressed log opened for writing", [&] { RunLog::open(path); });
  EXPECT_TRUE(read_file(path) == damaged) << "the refused log was changed";
  EXPECT_FALSE(std::filesystem::exists(dir / "log.h5.tmp"));
  const RunLog reader = RunLog::open(path, RunLog::Access::read_only);
  expect_one_line_error(path, "checksum mismatch in /log/return_mean",
                        "a damaged compressed chunk was read",
                        [&] { reader.doubles("return_mean"); });
  EXPECT_EQ(reader.int64s("generation"), e.generation);
  EXPECT_EQ(capture.text(), "");
}

constexpr int kBigLogBlocks = 16;
constexpr int kBigLogBlockRows = 1 << 16;
constexpr int kBigLogRows = kBigLogBlocks * kBigLogBlockRows;  // 48 MiB: a rewrite takes a while

// A log of kBigLogRows rows at `path`, compressed if `compressed`.
void write_big_log(const std::filesystem::path& path, bool compressed) {
  RunLog log = RunLog::create(path, es_columns());
  for (int block = 0; block < kBigLogBlocks; ++block) {
    std::vector<RunLog::Row> rows;
    for (int i = block * kBigLogBlockRows; i < (block + 1) * kBigLogBlockRows; ++i) {
      rows.push_back({i, 2 * i, 0.5 * i, -1.0 * i, i % 7, 0.25 * i});
    }
    log.append_rows(rows);
  }
  if (compressed) log.close_compressed();
}

// Runs `rewrite` (of the log at `path`) in a child process, and kills it (SIGKILL: no close, no
// cleanup) once the child has written a part of its copy, PATH.tmp.
void kill_in_the_middle_of(const std::filesystem::path& path,
                           const std::function<void()>& rewrite) {
  constexpr std::uintmax_t kCopyStarted = 1u << 20;  // bytes of the copy seen before the kill
  constexpr auto kPoll = std::chrono::microseconds(200);
  const auto temporary = path.string() + ".tmp";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      rewrite();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  auto copied = [&] {
    std::error_code missing;  // file_size is then -1
    const std::uintmax_t size = std::filesystem::file_size(temporary, missing);
    return !missing && size >= kCopyStarted;
  };
  while (!copied()) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, WNOHANG), 0) << "the rewrite ended before the kill";
    std::this_thread::sleep_for(kPoll);
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(std::filesystem::exists(temporary));
}

// What a killed rewrite leaves: the log as it was (`filters`) with all its rows, which a reader
// reads (ignoring the half-written copy); the next writer removes the copy and goes on.
void expect_whole_after_a_killed_rewrite(const std::filesystem::path& path,
                                         const std::vector<H5Z_filter_t>& filters) {
  EXPECT_EQ(filters_of(path, "seconds"), filters);
  {
    const RunLog reader = RunLog::open(path, RunLog::Access::read_only);
    ASSERT_EQ(reader.rows(), static_cast<std::size_t>(kBigLogRows));
    EXPECT_EQ(reader.doubles("seconds").back(), 0.25 * (kBigLogRows - 1));
  }
  StderrCapture capture;
  RunLog log = RunLog::open(path);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  EXPECT_EQ(log.rows(), static_cast<std::size_t>(kBigLogRows));
  log.append({kBigLogRows, 0, 1.0, 2.0, 3.0, 4.0});
  log.close_compressed();
  EXPECT_EQ(capture.text(), "");
  EXPECT_EQ(RunLog::open(path, RunLog::Access::read_only).rows(), kBigLogRows + 1u);
}

// A process killed in the middle of close_compressed() leaves the log uncompressed and whole.
TEST(RunLog, KilledInTheMiddleOfCompressionLeavesTheLogWithAllRows) {
  TempDir dir;
  const auto path = dir / "log.h5";
  write_big_log(path, false);
  ASSERT_NO_FATAL_FAILURE(
      kill_in_the_middle_of(path, [&] { RunLog::open(path).close_compressed(); }));
  expect_whole_after_a_killed_rewrite(path, kUncompressedFilters);
}

// A process killed while opening a compressed log for writing (decompressing it, as a resumed run
// does) leaves the log compressed and whole.
TEST(RunLog, KilledInTheMiddleOfDecompressionLeavesTheLogWithAllRows) {
  TempDir dir;
  const auto path = dir / "log.h5";
  write_big_log(path, true);
  ASSERT_NO_FATAL_FAILURE(kill_in_the_middle_of(path, [&] { RunLog::open(path); }));
  expect_whole_after_a_killed_rewrite(path, kCompressedFilters);
}

// A compression that cannot write its copy (here a folder is in the way of PATH.tmp) is one line
// naming the copy, and leaves the log whole and uncompressed (and the folder as it was).
TEST(RunLog, ACompressionThatCannotWriteItsCopyLeavesTheLogUncompressed) {
  TempDir dir;
  const auto path = dir / "log.h5";
  const auto in_the_way = dir / "log.h5.tmp";
  std::filesystem::create_directories(in_the_way / "keep");
  Expected e;
  StderrCapture capture;
  {
    RunLog log = RunLog::create(path, es_columns());
    e = fill(log, 0, 5);
    expect_one_line_error(path, "cannot compress into " + in_the_way.string(),
                          "compressed through a folder", [&] { log.close_compressed(); });
    EXPECT_THROW(log.rows(), RunLogError);  // closed
  }
  EXPECT_EQ(capture.text(), "");
  EXPECT_TRUE(std::filesystem::exists(in_the_way / "keep"));
  EXPECT_EQ(filters_of(path, "generation"), kUncompressedFilters);
  expect_rows(RunLog::open(path, RunLog::Access::read_only), e);
}

}  // namespace
}  // namespace fiber::rl::test
