// The rollout log of fiber-es and fiber-ppo (storage/rollout_log.hpp): --rollout-log, and its
// file beside --output claimed, checked and begun as the run log is (run/run_log_start.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "run/command_line.hpp"
#include "storage/file_lock.hpp"
#include "storage/rollout_log.hpp"

namespace CLI {
class App;
}

namespace fiber::rl {

// off: no rollout log; summary: one row per task; full: one row per rollout (episode).
enum class RolloutLevel { off, summary, full };

// --rollout-log off|summary|full (default full), `help` saying what each writes; another value:
// one line, exit 2.
void add_rollout_log(CLI::App& app, RolloutLevel& level, const std::string& help);

// The rollout log's file, claimed before anything is written: locked, and for a new run checked
// as --output is (an earlier run's rollouts are not replaced without --overwrite or --resume
// auto). `suffix`: see RolloutLog::path_beside. StorageError, one line.
struct ClaimedRolloutLog {
  std::filesystem::path path;
  FileLock lock;
};
ClaimedRolloutLog claim_rollout_log(const RunFiles& files, bool overwrite, bool resuming,
                                    const std::vector<RunLog::Column>& columns,
                                    const char* suffix = kRolloutsSuffix);

// A new rollout log, or the resumed run's with its rows of steps >= `steps_done` dropped (a new
// one, with a line saying so, if the run had none).
RolloutLog begin_rollout_log(const char* program, const ClaimedRolloutLog& claimed,
                             const std::vector<RunLog::Column>& columns, const char* step_column,
                             bool resuming, std::int64_t steps_done);

}  // namespace fiber::rl
