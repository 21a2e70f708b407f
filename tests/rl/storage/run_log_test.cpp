// RunLog: append / reopen / truncate round trips, errors, crash safety, and readability by h5py
// and h5dump.
#include "storage/run_log.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "storage/checkpoint.hpp"
#include "test_support.hpp"

namespace fiber::rl {
namespace {

using test::kPython;
using test::quoted;
using test::run_command;
using test::StderrCapture;
using test::TempDir;
using Type = RunLog::Type;

std::vector<RunLog::Column> es_columns() {
  return {{"generation", Type::int64},    {"timesteps", Type::int64},
          {"return_mean", Type::float64}, {"return_min", Type::float64},
          {"return_max", Type::float64},  {"seconds", Type::float64}};
}

// Values that a careless format would not round-trip exactly.
double awkward(int i) {
  constexpr double specials[] = {0.1,
                                 -0.0,
                                 1.0 / 3.0,
                                 std::numeric_limits<double>::denorm_min(),
                                 std::numeric_limits<double>::max(),
                                 -std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::quiet_NaN(),
                                 1e-300,
                                 123456789.123456789};
  return specials[i % 9] + (i % 9 == 6 ? 0.0 : static_cast<double>(i) * 1e-7);
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

struct Expected {
  std::vector<std::int64_t> generation, timesteps;
  std::vector<double> mean, min, max, seconds;
};

Expected fill(RunLog& log, int first, int count) {
  Expected e;
  for (int i = first; i < first + count; ++i) {
    const std::int64_t timesteps = (std::int64_t{1} << 40) | i;  // beyond 32 bits
    log.append({i, timesteps, awkward(i), awkward(i + 1), awkward(i + 2), i * 0.25});
    e.generation.push_back(i);
    e.timesteps.push_back(timesteps);
    e.mean.push_back(awkward(i));
    e.min.push_back(awkward(i + 1));
    e.max.push_back(awkward(i + 2));
    e.seconds.push_back(i * 0.25);
  }
  return e;
}

void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << "row " << i;
}

void expect_rows(const RunLog& log, const Expected& e) {
  EXPECT_EQ(log.rows(), e.generation.size());
  EXPECT_EQ(log.int64s("generation"), e.generation);
  EXPECT_EQ(log.int64s("timesteps"), e.timesteps);
  expect_same_bits(log.doubles("return_mean"), e.mean);
  expect_same_bits(log.doubles("return_min"), e.min);
  expect_same_bits(log.doubles("return_max"), e.max);
  expect_same_bits(log.doubles("seconds"), e.seconds);
}

bool one_line_naming(const std::string& message, const std::filesystem::path& path) {
  return message.find('\n') == std::string::npos &&
         message.find(path.string()) != std::string::npos;
}

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
  {
    RunLog log = RunLog::create(path, es_columns());
    e = fill(log, 0, 10);
  }
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
  {
    RunLog log = RunLog::create(path, es_columns());
    fill(log, 0, 3);
  }
  StderrCapture capture;
  try {
    RunLog::create(path, es_columns());
    ADD_FAILURE() << "create over an existing log succeeded";
  } catch (const RunLogError& error) {
    EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos);
  }
  EXPECT_EQ(capture.text(), "");
  EXPECT_EQ(RunLog::open(path).rows(), 3u);  // untouched
  RunLog fresh = RunLog::create(path, {{"x", Type::float64}}, RunLog::IfExists::overwrite);
  EXPECT_EQ(fresh.rows(), 0u);
  EXPECT_EQ(fresh.columns().size(), 1u);
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

// The script prints what h5py sees: the format marker, each column (in iteration order) as
// "name dtype length" and its values (floats as their 64-bit patterns), and one metadata value.
constexpr const char* kH5pyScript = R"(import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    print("format", f.attrs["format"].decode())
    print("version", int(f.attrs["version"]))
    for name, ds in f["log"].items():
        print("column", name, ds.dtype.str, len(ds), ds.fletcher32, ds.chunks[0])
        data = ds[:]
        if data.dtype.kind == "f":
            data = data.view("<u8")
        print("values", " ".join(str(int(x)) for x in data))
    env = f["meta/environment"][()]
    print("meta", env.decode() if isinstance(env, bytes) else env)
)";

struct H5pyView {
  std::string format;
  std::vector<std::string> columns;  // "name dtype length fletcher32 chunk"
  std::vector<std::vector<std::uint64_t>> values;
  std::string environment;
};

H5pyView read_with_h5py(const TempDir& dir, const std::filesystem::path& path, bool lock) {
  const auto script = dir / "read_log.py";
  std::ofstream(script) << kH5pyScript;
  const std::string env = lock ? "" : "HDF5_USE_FILE_LOCKING=FALSE ";
  const auto result =
      run_command(env + kPython + " " + quoted(script) + " " + quoted(path) + " 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  H5pyView view;
  std::istringstream in(result.output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    std::string rest;
    std::getline(words >> std::ws, rest);
    if (tag == "format") {
      view.format = rest;
    } else if (tag == "column") {
      view.columns.push_back(rest);
    } else if (tag == "values") {
      std::istringstream numbers(rest);
      std::vector<std::uint64_t> values;
      std::string number;
      while (numbers >> number) {
        values.push_back(number[0] == '-' ? static_cast<std::uint64_t>(std::stoll(number))
                                          : std::stoull(number));
      }
      view.values.push_back(std::move(values));
    } else if (tag == "meta") {
      view.environment = rest;
    }
  }
  return view;
}

void expect_h5py_sees(const H5pyView& view, const Expected& e) {
  EXPECT_EQ(view.format, "fiber-runlog");
  const std::string n = std::to_string(e.generation.size());
  ASSERT_EQ(view.columns.size(), 6u);
  EXPECT_EQ(view.columns[0], "generation <i8 " + n + " True 1024");
  EXPECT_EQ(view.columns[1], "timesteps <i8 " + n + " True 1024");
  EXPECT_EQ(view.columns[2], "return_mean <f8 " + n + " True 1024");
  EXPECT_EQ(view.columns[5], "seconds <f8 " + n + " True 1024");
  ASSERT_EQ(view.values.size(), 6u);
  auto as_bits = [](const std::vector<double>& v) {
    std::vector<std::uint64_t> out;
    for (double x : v) out.push_back(bits(x));
    return out;
  };
  auto as_unsigned = [](const std::vector<std::int64_t>& v) {
    return std::vector<std::uint64_t>(v.begin(), v.end());
  };
  EXPECT_EQ(view.values[0], as_unsigned(e.generation));
  EXPECT_EQ(view.values[1], as_unsigned(e.timesteps));
  EXPECT_EQ(view.values[2], as_bits(e.mean));
  EXPECT_EQ(view.values[3], as_bits(e.min));
  EXPECT_EQ(view.values[4], as_bits(e.max));
  EXPECT_EQ(view.values[5], as_bits(e.seconds));
  EXPECT_EQ(view.environment, "Pendulum");
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
  test::write_file(garbage, std::vector<char>(4096, 'x'));
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
    try {
      RunLog::open(path);
      ADD_FAILURE() << path << " opened";
    } catch (const RunLogError& error) {
      EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
      EXPECT_NE(std::string(error.what()).find(problem), std::string::npos) << error.what();
    }
    EXPECT_EQ(capture.text(), "") << path;
  }
}

// A read-only RunLog takes no lock (another process can open the file for writing meanwhile),
// and a second writer is refused while one holds the file.
TEST(RunLog, ReadersTakeNoLockAndASecondWriterIsRefused) {
  TempDir dir;
  const auto path = dir / "log.h5";
  {
    RunLog log = RunLog::create(path, es_columns());
    fill(log, 0, 3);
  }
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
    try {
      RunLog::open(path);
      ADD_FAILURE() << "a second writer opened the log";
    } catch (const RunLogError& error) {
      EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
      EXPECT_NE(std::string(error.what()).find("in use by another process"), std::string::npos)
          << error.what();
    }
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

// The byte offset of the first chunk of /log/<column> (h5py).
std::uint64_t first_chunk_offset(const std::filesystem::path& path, const std::string& column) {
  const auto result =
      run_command(std::string(kPython) + " -c \"import h5py, sys; print(h5py.File(" +
                  "sys.argv[1], 'r')['log/' + sys.argv[2]].id.get_chunk_info(0)" +
                  ".byte_offset)\" " + quoted(path) + " " + column + " 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return std::stoull(result.output);
}

// A row that Fletcher32 finds damaged is refused when the log is opened for writing (resume),
// naming the column and rows, and the file is left as it was (it used to be rewritten with a
// fresh checksum, keeping the wrong value).
TEST(RunLog, CorruptedRowIsRefusedAndTheFileLeftAsItWas) {
  TempDir dir;
  const auto path = dir / "log.h5";
  {
    RunLog log = RunLog::create(path, es_columns());
    fill(log, 0, 1500);  // two chunks per column
  }
  const std::uint64_t offset = first_chunk_offset(path, "return_mean");
  test::overwrite_bytes(path, offset + 3 * sizeof(double), sizeof(double), 0x7f);
  const std::vector<char> damaged = test::read_file(path);
  StderrCapture capture;
  try {
    RunLog::open(path);
    ADD_FAILURE() << "a corrupted log opened for writing";
  } catch (const RunLogError& error) {
    EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
    EXPECT_NE(std::string(error.what()).find("checksum mismatch in /log/return_mean, rows 0-1023"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(capture.text(), "");
  EXPECT_TRUE(test::read_file(path) == damaged) << "the refused log was changed";
  EXPECT_THROW(RunLog::open(path, RunLog::Access::read_only).doubles("return_mean"), RunLogError);
}

// What a crash inside an append leaves, a chunk whose new row was written in part and whose
// checksum is still the one before, is repaired: the counted rows are intact.
TEST(RunLog, ChunkTornByACrashedAppendIsRepaired) {
  TempDir dir;
  const auto path = dir / "log.h5";
  Expected e;
  {
    RunLog log = RunLog::create(path, es_columns());
    e = fill(log, 0, 5);
  }
  const std::uint64_t offset = first_chunk_offset(path, "seconds");
  test::overwrite_bytes(path, offset + 5 * sizeof(double), sizeof(double) / 2, 0x3f);  // row 5
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
  {
    RunLog log = RunLog::create(path, es_columns());
    fill(log, 0, 3);
  }
  {
    RunLog reader = RunLog::open(path, RunLog::Access::read_only);
    EXPECT_THROW(reader.close_compressed(), RunLogError);
  }
  EXPECT_EQ(filters_of(path, "generation"), kUncompressedFilters);
}

// A compressed log (by close_compressed() or h5repack) opened for writing is first replaced by an
// uncompressed copy (it used to be refused), then resumed as any log: cut back, appended to, and
// compressed again at the end, with every row once.
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
  test::flip_byte(path, first_chunk_offset(path, "return_mean") + kInsideTheStream);
  const std::vector<char> damaged = test::read_file(path);
  StderrCapture capture;
  try {
    RunLog::open(path);
    ADD_FAILURE() << "a damaged compressed log opened for writing";
  } catch (const RunLogError& error) {
    EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
    EXPECT_NE(std::string(error.what()).find("damaged (checksum mismatch in /log/return_mean"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(test::read_file(path) == damaged) << "the refused log was changed";
  EXPECT_FALSE(std::filesystem::exists(dir / "log.h5.tmp"));
  const RunLog reader = RunLog::open(path, RunLog::Access::read_only);
  try {
    reader.doubles("return_mean");
    ADD_FAILURE() << "a damaged compressed chunk was read";
  } catch (const RunLogError& error) {
    EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
    EXPECT_NE(std::string(error.what()).find("checksum mismatch in /log/return_mean"),
              std::string::npos)
        << error.what();
  }
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
    try {
      log.close_compressed();
      ADD_FAILURE() << "compressed through a folder";
    } catch (const RunLogError& error) {
      EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
      EXPECT_NE(std::string(error.what()).find("cannot compress into " + in_the_way.string()),
                std::string::npos)
          << error.what();
    }
    EXPECT_THROW(log.rows(), RunLogError);  // closed
  }
  EXPECT_EQ(capture.text(), "");
  EXPECT_TRUE(std::filesystem::exists(in_the_way / "keep"));
  EXPECT_EQ(filters_of(path, "generation"), kUncompressedFilters);
  expect_rows(RunLog::open(path, RunLog::Access::read_only), e);
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
}  // namespace fiber::rl
