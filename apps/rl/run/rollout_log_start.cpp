#include "run/rollout_log_start.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <system_error>

#include "run/run_log_start.hpp"

namespace fiber::rl {

void add_rollout_log(CLI::App& app, RolloutLevel& level, const std::string& help) {
  static const std::map<std::string, RolloutLevel> levels{
      {"off", RolloutLevel::off}, {"summary", RolloutLevel::summary}, {"full", RolloutLevel::full}};
  app.add_option_function<std::string>(
         "--rollout-log", [&level](const std::string& name) { level = levels.at(name); }, help)
      ->check(CLI::IsMember({"off", "summary", "full"}))
      ->default_str("full");
}

ClaimedRolloutLog claim_rollout_log(const RunFiles& files, bool overwrite, bool resuming,
                                    const std::vector<RunLog::Column>& columns,
                                    const char* suffix) {
  const std::filesystem::path path = RolloutLog::path_beside(files.output, suffix);
  refuse_unless_regular("the rollout log", path.string(),
                        "choose another --output, or --rollout-log off");
  if (same_file(path, files.checkpoint)) {
    throw StorageError("--checkpoint " + files.checkpoint + " is the rollout log's file " +
                       path.string() + ": give the checkpoint another name, or --rollout-log off");
  }
  FileLock lock = FileLock::acquire(path);
  if (!resuming) check_new_output(path.string(), columns, existing_output(overwrite, files.resume));
  return {path, std::move(lock)};
}

RolloutLog begin_rollout_log(const char* program, const ClaimedRolloutLog& claimed,
                             const std::vector<RunLog::Column>& columns, const char* step_column,
                             bool resuming, std::int64_t steps_done) {
  std::error_code error;
  if (resuming && std::filesystem::exists(claimed.path, error)) {
    return RolloutLog::resume(claimed.path, columns, step_column, steps_done);
  }
  if (resuming) {
    std::printf("%s: no rollout log %s to continue: a new one begins at %s %lld\n", program,
                claimed.path.c_str(), step_column, static_cast<long long>(steps_done));
  }
  return RolloutLog::create(claimed.path, columns, step_column);
}

}  // namespace fiber::rl
