// TrainingSession: what a training run of fiber-es and fiber-ppo does around its algorithm:
// claim the run's files and resume from its checkpoint or start anew, start the pool, open the
// run log (a new one with its metadata, or the resumed run's, cut back to the checkpoint), write
// the run's checkpoints, tell when one is due, stop on request after checkpointing, and end a
// failure as one line "PROGRAM: what" with its exit status (a file: kExitBadInput; the pool's
// start: kExitError). The run's id pairs its log with its checkpoints (run/checkpoint_start.hpp).
//
//   rl::TrainingSession session({"fiber-es", "generation", log_columns()}, o.files, o.overwrite);
//   return session.run([&] {
//     session.claim([&](const rl::CheckpointReader& checkpoint) { load(state, checkpoint); });
//     fiber::Pool& pool = session.start_pool({.processes = o.workers, ...});
//     session.open_log(state.generation, {{"config", o.config_text}, ...});
//     while (state.generation < o.generations) {
//       if (rl::stop_requested()) return session.stop(state.generation, [&] { save(state); });
//       ...  // one generation
//       session.log().append({...});
//       if (session.checkpoint_due(state.generation, o.generations)) save(state);
//       // save(): rl::CheckpointWriter w; w.put(...); session.commit_checkpoint(w);
//     }
//     session.close_logs({&rollouts});
//     return 0;
//   });
#pragma once

#include <fiber/pool.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/command_line.hpp"
#include "run/run_log_start.hpp"
#include "storage/checkpoint.hpp"
#include "storage/rollout_log.hpp"
#include "storage/run_log.hpp"

namespace fiber::rl {

// What a trainer tells the session about itself.
struct TrainingProgram {
  const char* name;  // "fiber-es": the first word of its lines
  const char* step;  // "generation", "iteration": what a row of its log is
  std::vector<RunLog::Column> columns;
};

class TrainingSession {
 public:
  using Metadata = std::vector<std::pair<std::string, std::string>>;

  TrainingSession(TrainingProgram program, const RunFiles& files, bool overwrite);

  // Runs the training `body` and returns its exit status; a StorageError, or a failure to start
  // the pool, ends it as one line on stderr and its exit status.
  int run(const std::function<int()>& body);

  // Claims the run's files (storage/file_lock.hpp; none may be a FIFO, a directory or a device)
  // and, when the run resumes, has `load` read the checkpoint (opened and verified), which must be
  // of the run whose log is at --output. A file already at --checkpoint that is neither the
  // checkpoint resumed nor one of this run's is refused unless --overwrite. Everything that can
  // refuse a run comes before any file is created.
  void claim(const std::function<void(const CheckpointReader& checkpoint)>& load);
  bool resuming() const;

  // Starts the pool (a failure ends the run with kExitError) and notes its hosts.
  fiber::Pool& start_pool(fiber::PoolOptions options);
  const std::string& hosts() const { return hosts_; }

  // The run log: the resumed run's, cut back to `steps_done` rows (a line says so), or a new one
  // with `meta`; either records the pool's hosts and the run's id.
  RunLog& open_log(std::int64_t steps_done, const Metadata& meta);
  RunLog& log();

  // Writes `checkpoint`, with the run's id added, atomically to --checkpoint (CheckpointError).
  void commit_checkpoint(CheckpointWriter& checkpoint) const;

  // True when `steps_done` of `total` steps is a point for a regular checkpoint.
  bool checkpoint_due(std::int64_t steps_done, std::int64_t total) const;

  // The run ended cleanly: closes the run log and the `rollouts` logs, compressed unless
  // --no-compress-logs (RunLog::close_compressed), while the run still holds their locks; a line
  // says how long that took. A failure to compress is one warning line: the log is left whole and
  // uncompressed.
  void close_logs(const std::vector<RolloutLog*>& rollouts);

  // A stop requested by a signal: `save` writes the checkpoint, then the pool is torn down, the
  // logs closed (close_logs) and a line says how to resume. Returns kExitPreempted.
  int stop(std::int64_t steps_done, const std::function<void()>& save,
           const std::vector<RolloutLog*>& rollouts);

 private:
  TrainingProgram program_;
  const RunFiles& files_;
  bool overwrite_;
  // Destroyed in reverse: the log closes before the pool ends, and the locks go last.
  std::optional<ClaimedRun> claimed_;
  std::optional<fiber::Pool> pool_;
  std::optional<RunLog> log_;
  std::string hosts_;
  std::string run_id_;  // after claim(): a new run's, or the resumed run's
};

}  // namespace fiber::rl
