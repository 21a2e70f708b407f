// RolloutLog: the rollouts of a run, one row each (or one per task), in a run-log file of their
// own beside the run log: OUTPUT with .rollouts.h5 ("run.h5" -> "run.rollouts.h5").
//
//   RolloutLog rollouts = RolloutLog::create("run.rollouts.h5", columns, "generation");
//   rollouts.append_step({{g, 0, noise, +1, ...}, {g, 0, noise, -1, ...}, ...});  // one generation
//   // resuming at generation 42: the rows of generations >= 42 (after the checkpoint) are dropped
//   RolloutLog rollouts = RolloutLog::resume("run.rollouts.h5", columns, "generation", 42);
//
// A file of its own, not a group of the run log: the summary log stays small for the readers that
// follow a run (scripts/plot.py), the rollouts can be switched off or deleted without touching the
// log, and they are written with RunLog itself (its format, checksums, crash repair and `rows`
// attribute): columns /log/<name>, metadata /meta/<key>. A step's rows are counted together
// (RunLog::append_rows), so a reader sees whole generations only. Hosts are stored as an index
// into the comma-separated /meta/hosts, which grows as workers on new hosts report. A run that
// ends cleanly compresses it (log().close_compressed()); resume() decompresses it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "storage/run_log.hpp"

namespace fiber::rl {

inline constexpr const char* kRolloutsSuffix = ".rollouts.h5";
inline constexpr const char* kTasksSuffix = ".tasks.h5";

class RolloutLog {
 public:
  // OUTPUT with `suffix` (.rollouts.h5; fiber-ppo's per-task rows: .tasks.h5).
  static std::filesystem::path path_beside(const std::filesystem::path& run_log,
                                           const char* suffix = kRolloutsSuffix);

  // A new log at `path` (a file there is replaced: check it first). `step_column` is the int64
  // column the rows are ordered by (generation, iteration). RunLogError if it cannot be created.
  static RolloutLog create(const std::filesystem::path& path, std::vector<RunLog::Column> columns,
                           std::string step_column);
  // The log of a resumed run, its rows of steps >= `steps_done` dropped. RunLogError (one line) if
  // it cannot be opened, is damaged, or has other columns (written with another --rollout-log).
  static RolloutLog resume(const std::filesystem::path& path,
                           const std::vector<RunLog::Column>& columns, std::string step_column,
                           std::int64_t steps_done);

  // One step's rows, in column order, counted together.
  void append_step(const std::vector<RunLog::Row>& rows);
  // The index of `host` in /meta/hosts (added, and the metadata rewritten, if new).
  std::int64_t host_index(std::string_view host);

  RunLog& log() { return log_; }

 private:
  RolloutLog(RunLog log, std::string step_column);

  RunLog log_;
  std::string step_column_;
  std::vector<std::string> hosts_;
};

}  // namespace fiber::rl
