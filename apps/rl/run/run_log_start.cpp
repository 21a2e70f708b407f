#include "run/run_log_start.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include "storage/file_kind.hpp"

namespace fiber::rl {
namespace {

namespace fs = std::filesystem;

std::string now_text() {
  std::time_t now = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return text;
}

}  // namespace

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  if (fs::equivalent(a, b, error)) return true;
  std::error_code error_a, error_b;
  const fs::path canonical_a = fs::weakly_canonical(fs::absolute(a), error_a);
  const fs::path canonical_b = fs::weakly_canonical(fs::absolute(b), error_b);
  return !error_a && !error_b && canonical_a == canonical_b;
}

void refuse_unless_regular(const std::string& what, const std::string& path,
                           const std::string& remedy) {
  const std::string_view kind = non_regular_kind(path);
  if (kind.empty()) return;
  throw StorageError(
      fmt::format("{} {} is {}, not a regular file; refused: {}", what, path, kind, remedy));
}

RunFileLocks claim_run_files(const std::string& output, const std::string& checkpoint) {
  refuse_unless_regular("--output", output, "give --output the path of a file");
  refuse_unless_regular("--checkpoint", checkpoint, "give --checkpoint the path of a file");
  if (same_file(output, checkpoint)) {
    throw StorageError(fmt::format(
        "--output {} and --checkpoint {} are the same file: give the checkpoint its own name "
        "(by default the log's with .ckpt.h5)",
        output, checkpoint));
  }
  FileLock output_lock = FileLock::acquire(output);
  return {std::move(output_lock), FileLock::acquire(checkpoint)};
}

ExistingOutput existing_output(bool overwrite, const std::string& resume) {
  if (overwrite) return ExistingOutput::replace_any;
  return resume == "auto" ? ExistingOutput::replace_run_log : ExistingOutput::refuse;
}

std::string check_new_output(const std::string& path, const std::vector<RunLog::Column>& columns,
                             ExistingOutput existing) {
  std::error_code error;
  if (!fs::exists(path, error) || existing == ExistingOutput::replace_any) return "";
  std::optional<std::size_t> rows;  // set if the file is a log of this program
  try {
    const RunLog log = RunLog::open(path, RunLog::Access::read_only);
    if (log.columns() == columns) rows = log.rows();
  } catch (const RunLogError&) {
  }
  if (!rows) {
    throw StorageError(fmt::format(
        "--output {} exists and is not a run log of this program; refused, not to destroy it: "
        "choose another --output, or pass --overwrite to replace it",
        path));
  }
  if (existing == ExistingOutput::refuse) {
    throw StorageError(fmt::format(
        "--output {} holds the log of an earlier run ({} rows); refused, not to destroy it: "
        "continue it with --resume auto, choose another --output, or pass --overwrite to replace "
        "it",
        path, *rows));
  }
  return fmt::format(
      "no checkpoint to resume from yet: the run starts over, replacing its log {} "
      "({} rows)",
      path, *rows);
}

ClaimedRun claim_run(const char* program, const RunFiles& files, bool overwrite,
                     const std::vector<RunLog::Column>& columns) {
  ClaimedRun claimed{claim_run_files(files.output, files.checkpoint), ""};
  for (const FileLock* lock : {&claimed.locks.output, &claimed.locks.checkpoint}) {
    if (!lock->takeover_note().empty()) {
      std::fprintf(stderr, "%s: %s\n", program, lock->takeover_note().c_str());
    }
  }
  if (!files.resume.empty() && files.resume != "auto") {  // --checkpoint was checked above
    refuse_unless_regular("--resume", files.resume, "give --resume a checkpoint file, or auto");
  }
  claimed.resume = files.checkpoint_to_resume();
  if (claimed.resume.empty()) {
    const std::string note =
        check_new_output(files.output, columns, existing_output(overwrite, files.resume));
    if (!note.empty()) std::printf("%s: %s\n", program, note.c_str());
  }
  return claimed;
}

RunLog start_run_log(const std::string& path, std::vector<RunLog::Column> columns,
                     const std::vector<std::pair<std::string, std::string>>& meta) {
  auto log = RunLog::create(path, std::move(columns), RunLog::IfExists::overwrite);
  for (const auto& [key, value] : meta) log.set_meta(key, value);
  log.set_meta("fiber_version", FIBER_VERSION);
  log.set_meta("started", now_text());
  return log;
}

RunLog continue_run_log(const std::string& path, const std::vector<RunLog::Column>& columns,
                        std::size_t rows_done, const std::string& checkpoint) {
  {
    // Checked read-only first, so that a refused log is left as it was (opening a compressed
    // log for writing rewrites it uncompressed); closed before it is opened for writing.
    const RunLog existing = RunLog::open(path, RunLog::Access::read_only);
    if (existing.columns() != columns) {
      throw RunLogError(fmt::format(
          "run log {}: not a log of this program (other columns); resume with the log written "
          "beside the checkpoint {}",
          path, checkpoint));
    }
    if (existing.rows() < rows_done) {
      throw RunLogError(fmt::format(
          "run log {}: has {} rows, but the checkpoint {} is at row {}: the checkpoint is ahead "
          "of this log (another run's, or an older copy); resume with the log written with that "
          "checkpoint, or start a new run with another --output",
          path, existing.rows(), checkpoint, rows_done));
    }
  }
  auto log = RunLog::open(path);
  log.truncate(rows_done);
  return log;
}

std::string host_list(const fiber::Pool& pool) {
  std::set<std::string> hosts;
  for (const auto& worker : pool.workers()) hosts.insert(worker.host);
  std::string list;
  for (const auto& host : hosts) list += (list.empty() ? "" : ",") + host;
  return list;
}

}  // namespace fiber::rl
