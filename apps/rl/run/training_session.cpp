#include "run/training_session.hpp"

#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "run/checkpoint_start.hpp"
#include "run/exit_status.hpp"
#include "run/stop_request.hpp"
#include "storage/error.hpp"

namespace fiber::rl {

namespace {

constexpr double kBytesPerMegabyte = 1e6;

// For the line on the logs' sizes: an unreadable size counts as none.
std::uintmax_t size_or_zero(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

// The pool could not be started (its fiber::Error's message).
class PoolStartFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace

TrainingSession::TrainingSession(TrainingProgram program, const RunFiles& files, bool overwrite)
    : program_(std::move(program)), files_(files), overwrite_(overwrite) {}

int TrainingSession::run(const std::function<int()>& body) {
  auto failed = [&](const std::exception& error, int status) {
    std::fprintf(stderr, "%s: %s\n", program_.name, error.what());
    return status;
  };
  try {
    return body();
  } catch (const StorageError& error) {
    return failed(error, kExitBadInput);
  } catch (const PoolStartFailure& error) {
    return failed(error, kExitError);
  }
}

void TrainingSession::claim(const std::function<void(const CheckpointReader& checkpoint)>& load) {
  claimed_.emplace(claim_run(program_.name, files_, overwrite_, program_.columns));
  if (!resuming()) {
    run_id_ = new_run_id();
    check_checkpoint_target(files_.checkpoint, "", run_id_, overwrite_);
    return;
  }
  const CheckpointReader checkpoint(claimed_->resume);
  load(checkpoint);  // first: its program, environment and network are checked there
  run_id_ = resumed_run_id(checkpoint, files_.output);
  check_checkpoint_target(files_.checkpoint, claimed_->resume, run_id_, overwrite_);
}

bool TrainingSession::resuming() const { return claimed_ && !claimed_->resume.empty(); }

fiber::Pool& TrainingSession::start_pool(fiber::PoolOptions options) {
  try {
    pool_.emplace(std::move(options));
  } catch (const fiber::Error& error) {
    throw PoolStartFailure(error.what());
  }
  hosts_ = host_list(*pool_);
  return *pool_;
}

RunLog& TrainingSession::open_log(std::int64_t steps_done, const Metadata& meta) {
  if (resuming()) {
    log_.emplace(continue_run_log(files_.output, program_.columns,
                                  static_cast<std::size_t>(steps_done), claimed_->resume));
    std::printf("%s: resumed from %s at %s %lld\n", program_.name, claimed_->resume.c_str(),
                program_.step, static_cast<long long>(steps_done));
  } else {
    log_.emplace(start_run_log(files_.output, program_.columns, meta));
  }
  log_->set_meta("hosts", hosts_);
  log_->set_meta(kRunIdKey, run_id_);
  return *log_;
}

RunLog& TrainingSession::log() {
  if (!log_) throw std::logic_error("TrainingSession::log() before open_log()");
  return *log_;
}

void TrainingSession::commit_checkpoint(CheckpointWriter& checkpoint) const {
  checkpoint.put(kRunIdKey, run_id_);
  checkpoint.commit(files_.checkpoint);
}

bool TrainingSession::checkpoint_due(std::int64_t steps_done, std::int64_t total) const {
  return steps_done % files_.checkpoint_every == 0 || steps_done == total;
}

void TrainingSession::close_logs(const std::vector<RolloutLog*>& rollouts) {
  std::vector<RunLog*> logs;
  if (log_) logs.push_back(&*log_);
  for (RolloutLog* rollout : rollouts) {
    if (rollout != nullptr) logs.push_back(&rollout->log());
  }
  if (logs.empty()) return;
  if (!files_.compress_logs) {
    for (RunLog* log : logs) log->close();
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  std::uintmax_t bytes_before = 0, bytes_after = 0;
  for (RunLog* log : logs) {
    const std::filesystem::path path = log->path();
    bytes_before += size_or_zero(path);
    try {
      log->close_compressed();
    } catch (const RunLogError& error) {
      std::fprintf(stderr, "%s: warning: %s (left uncompressed)\n", program_.name, error.what());
    }
    bytes_after += size_or_zero(path);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%s: compressed %zu logs in %.2f s: %.2f MB -> %.2f MB\n", program_.name, logs.size(),
              seconds, static_cast<double>(bytes_before) / kBytesPerMegabyte,
              static_cast<double>(bytes_after) / kBytesPerMegabyte);
}

int TrainingSession::stop(std::int64_t steps_done, const std::function<void()>& save,
                          const std::vector<RolloutLog*>& rollouts) {
  save();
  if (pool_) pool_->terminate();
  close_logs(rollouts);
  std::printf("%s: stopped by %s after %lld %ss; checkpoint %s; resume with --resume auto\n",
              program_.name, stop_signal_name(), static_cast<long long>(steps_done), program_.step,
              files_.checkpoint.c_str());
  return kExitPreempted;
}

}  // namespace fiber::rl
