// Helpers of the RunLog tests (run_log_test.cpp, run_log_recovery_test.cpp,
// run_log_compression_test.cpp): fiber-es's columns, rows of values that a careless format would
// not round-trip, the checks of what RunLog and h5py read back, and where a column's data lies.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "storage/run_log.hpp"
#include "test_support.hpp"

namespace fiber::rl::test {

inline std::vector<RunLog::Column> es_columns() {
  using Type = RunLog::Type;
  return {{"generation", Type::int64},    {"timesteps", Type::int64},
          {"return_mean", Type::float64}, {"return_min", Type::float64},
          {"return_max", Type::float64},  {"seconds", Type::float64}};
}

// Values that a careless format would not round-trip exactly.
inline double awkward(int i) {
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

inline std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

struct Expected {
  std::vector<std::int64_t> generation, timesteps;
  std::vector<double> mean, min, max, seconds;
};

inline Expected fill(RunLog& log, int first, int count) {
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

// A log of es_columns() at `path` with fill()'s rows 0..rows-1, closed again.
inline Expected write_log(const std::filesystem::path& path, int rows) {
  RunLog log = RunLog::create(path, es_columns());
  return fill(log, 0, rows);
}

inline void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << "row " << i;
}

inline void expect_rows(const RunLog& log, const Expected& e) {
  EXPECT_EQ(log.rows(), e.generation.size());
  EXPECT_EQ(log.int64s("generation"), e.generation);
  EXPECT_EQ(log.int64s("timesteps"), e.timesteps);
  expect_same_bits(log.doubles("return_mean"), e.mean);
  expect_same_bits(log.doubles("return_min"), e.min);
  expect_same_bits(log.doubles("return_max"), e.max);
  expect_same_bits(log.doubles("seconds"), e.seconds);
}

inline bool one_line_naming(const std::string& message, const std::filesystem::path& path) {
  return message.find('\n') == std::string::npos &&
         message.find(path.string()) != std::string::npos;
}

// Runs `call`, which must throw a RunLogError in one line that names `path` and says `problem`;
// `if_it_returns` is the failure reported when it does not throw.
template <class Call>
void expect_one_line_error(const std::filesystem::path& path, const std::string& problem,
                           const std::string& if_it_returns, Call&& call) {
  try {
    call();
    ADD_FAILURE() << if_it_returns;
  } catch (const RunLogError& error) {
    EXPECT_TRUE(one_line_naming(error.what(), path)) << error.what();
    EXPECT_NE(std::string(error.what()).find(problem), std::string::npos) << error.what();
  }
}

// The script prints what h5py sees: the format marker, each column (in iteration order) as
// "name dtype length" and its values (floats as their 64-bit patterns), and one metadata value.
inline constexpr const char* kH5pyScript = R"(import sys
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

inline H5pyView read_with_h5py(const TempDir& dir, const std::filesystem::path& path, bool lock) {
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

inline void expect_h5py_sees(const H5pyView& view, const Expected& e) {
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

// The byte offset of the first chunk of /log/<column> (h5py).
inline std::uint64_t first_chunk_offset(const std::filesystem::path& path,
                                        const std::string& column) {
  const auto result =
      run_command(std::string(kPython) + " -c \"import h5py, sys; print(h5py.File(" +
                  "sys.argv[1], 'r')['log/' + sys.argv[2]].id.get_chunk_info(0)" +
                  ".byte_offset)\" " + quoted(path) + " " + column + " 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return std::stoull(result.output);
}

}  // namespace fiber::rl::test
