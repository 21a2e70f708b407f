#include "run/checkpoint_start.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <system_error>

#include "run/run_log_start.hpp"
#include "storage/error.hpp"
#include "storage/run_log.hpp"

namespace fiber::rl {
namespace {

// Random words in a run id (of 32 bits each, std::random_device's).
constexpr std::size_t kRunIdWords = 4;
// Digits of a run id shown in a message: enough to tell two runs apart.
constexpr std::size_t kShownRunIdDigits = 8;

std::string shown(const std::string& run_id) {
  return run_id.empty() ? std::string("none") : run_id.substr(0, kShownRunIdDigits);
}

}  // namespace

std::string new_run_id() {
  std::random_device device;
  std::string id;
  for (std::size_t word = 0; word < kRunIdWords; ++word) {
    id += fmt::format("{:08x}", static_cast<std::uint32_t>(device()));
  }
  return id;
}

void check_checkpoint_target(const std::string& path, const std::string& resumed,
                             const std::string& run_id, bool overwrite) {
  std::error_code error;
  if (!std::filesystem::exists(path, error) || overwrite) return;
  if (!resumed.empty() && same_file(path, resumed)) return;
  std::optional<std::string> owner;  // set if the file is a fiber checkpoint: its run id or ""
  try {
    const CheckpointReader checkpoint(path);
    owner = checkpoint.has(kRunIdKey) ? checkpoint.string(kRunIdKey) : "";
  } catch (const CheckpointError&) {
  }
  if (!owner) {
    throw StorageError(fmt::format(
        "--checkpoint {} exists and is not a checkpoint; refused, not to destroy it: choose "
        "another --checkpoint, or pass --overwrite to replace it",
        path));
  }
  if (!run_id.empty() && *owner == run_id) return;
  throw StorageError(fmt::format(
      "--checkpoint {} holds the checkpoint of another run; refused, not to destroy it: continue "
      "that run with --resume auto and its --output, choose another --checkpoint, or pass "
      "--overwrite to replace it",
      path));
}

std::string resumed_run_id(const CheckpointReader& checkpoint, const std::string& log_path) {
  const RunLog log = RunLog::open(log_path, RunLog::Access::read_only);
  const std::string log_id = log.meta(kRunIdKey).value_or("");
  if (!checkpoint.has(kRunIdKey)) return log_id.empty() ? new_run_id() : log_id;
  const std::string& id = checkpoint.string(kRunIdKey);
  if (id == log_id) return id;
  throw StorageError(fmt::format(
      "checkpoint {} is another run's than the log {} (run {}, the log's {}); refused: resume "
      "with the log written beside that checkpoint as --output, or start this run anew without "
      "--resume (--overwrite replaces its files)",
      checkpoint.path().string(), log_path, shown(id), shown(log_id)));
}

}  // namespace fiber::rl
