#include "run/training_session.hpp"

#include <fiber/fiber.hpp>

#include <cstdio>
#include <stdexcept>

#include "run/exit_status.hpp"
#include "run/stop_request.hpp"
#include "storage/error.hpp"

namespace fiber::rl {

namespace {

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

void TrainingSession::claim(const std::function<void(const std::string& checkpoint)>& load) {
  claimed_.emplace(claim_run(program_.name, files_, overwrite_, program_.columns));
  if (resuming()) load(claimed_->resume);
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
  return *log_;
}

RunLog& TrainingSession::log() {
  if (!log_) throw std::logic_error("TrainingSession::log() before open_log()");
  return *log_;
}

bool TrainingSession::checkpoint_due(std::int64_t steps_done, std::int64_t total) const {
  return steps_done % files_.checkpoint_every == 0 || steps_done == total;
}

int TrainingSession::stop(std::int64_t steps_done, const std::function<void()>& save) {
  save();
  if (pool_) pool_->terminate();
  std::printf("%s: stopped by %s after %lld %ss; checkpoint %s; resume with --resume auto\n",
              program_.name, stop_signal_name(), static_cast<long long>(steps_done), program_.step,
              files_.checkpoint.c_str());
  return kExitPreempted;
}

}  // namespace fiber::rl
