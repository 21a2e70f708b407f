// The cost of compressing a run's logs at its clean end and of decompressing them when it resumes
// (storage/run_log.hpp: RunLog::close_compressed, RunLog::open for writing), on logs a real run
// wrote uncompressed (fiber-es --no-compress-logs; benchmarks/rollout_log/rollout_log_cost.sh).
// Per file: its size before and after, and both times, also per MB of the uncompressed file. The
// files are left compressed. --repeat N first makes each file N times as long, its rows N times
// over (a realistic large log from a short run: HDF5 deflates each 1,024-row chunk alone, so the
// chunks compress as the real rows do).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "storage/error.hpp"
#include "storage/run_log.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using fiber::rl::RunLog;

constexpr double kBytesPerMegabyte = 1e6;

constexpr std::size_t kRowsPerAppend = 1 << 16;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Rewrites the log at `path` with its rows `times` times over (and its metadata).
void repeat_rows(const std::string& path, int times) {
  std::vector<RunLog::Column> columns;
  std::vector<std::vector<RunLog::Value>> values;  // per column
  std::map<std::string, std::string> meta;
  {
    const RunLog log = RunLog::open(path, RunLog::Access::read_only);
    columns = log.columns();
    meta = log.meta();
    for (const RunLog::Column& column : columns) {
      std::vector<RunLog::Value>& out = values.emplace_back();
      if (column.type == RunLog::Type::int64) {
        for (std::int64_t v : log.int64s(column.name)) out.emplace_back(v);
      } else {
        for (double v : log.doubles(column.name)) out.emplace_back(v);
      }
    }
  }
  RunLog log = RunLog::create(path, columns, RunLog::IfExists::overwrite);
  for (const auto& [key, value] : meta) log.set_meta(key, value);
  const std::size_t rows = values.front().size();
  std::vector<RunLog::Row> block;
  for (int t = 0; t < times; ++t) {
    for (std::size_t r = 0; r < rows; ++r) {
      RunLog::Row& row = block.emplace_back();
      for (const auto& column : values) row.push_back(column[r]);
      if (block.size() == kRowsPerAppend) {
        log.append_rows(block);
        block.clear();
      }
    }
  }
  log.append_rows(block);
  log.close();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> logs;
  CLI::App app{"Times compressing run logs at a clean end, and decompressing them on resume.",
               "log_compression_cost"};
  int repeat = 1;
  app.add_option("logs", logs, "uncompressed run or rollout logs (left compressed)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--repeat", repeat, "each log's rows this many times over first")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;

  try {
    for (const std::string& path : logs) {
      if (repeat > 1) repeat_rows(path, repeat);
      const double megabytes =
          static_cast<double>(std::filesystem::file_size(path)) / kBytesPerMegabyte;
      auto started = Clock::now();
      RunLog::open(path).close_compressed();
      const double compress = seconds_since(started);
      const double compressed =
          static_cast<double>(std::filesystem::file_size(path)) / kBytesPerMegabyte;
      started = Clock::now();
      RunLog resumed = RunLog::open(path);  // decompresses
      const double decompress = seconds_since(started);
      resumed.close_compressed();
      std::printf(
          "log_compression_cost: %s: %.2f MB -> %.2f MB; compress %.3f s (%.3f s per MB), "
          "decompress %.3f s (%.3f s per MB)\n",
          path.c_str(), megabytes, compressed, compress, compress / megabytes, decompress,
          decompress / megabytes);
    }
  } catch (const fiber::rl::StorageError& error) {
    std::fprintf(stderr, "log_compression_cost: %s\n", error.what());
    return 1;
  }
  return 0;
}
