// What the command lines of fiber-es and fiber-ppo share (CLI11): the options naming the files a
// run writes and resumes from, --name/--no-name switches whose defaults show, and parsing where
// bad input gets one line on stderr and exit status 2.
//
//   CLI::App app{"...", "fiber-es"};
//   fiber::rl::add_switch(app, "--stop-at-target,!--no-stop-at-target", o.stop, "...");
//   fiber::rl::add_run_files(app, o.files, "generation");
//   fiber::rl::parse_or_exit(app, o.files, argc, argv);  // also fills in o.files.checkpoint
//   app.add_option("--sigma", o.sigma)->check(fiber::rl::positive());  // also refuses nan, inf
//   if (bad) fiber::rl::reject(app, "--population must be even, not 3");
#pragma once

#include <chrono>
#include <string>
#include <utility>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace fiber::rl {

// Checks of number options, flags and TOML values alike. Each refuses NaN, infinities and
// anything that is not a number, with a message that names the accepted range.
CLI::Validator finite();                          // any finite number
CLI::Validator positive();                        // finite, > 0
CLI::Validator non_negative();                    // finite, >= 0
CLI::Validator in_range(double min, double max);  // finite, in [min, max]

// The files of a run.
struct RunFiles {
  explicit RunFiles(std::string default_output) : output(std::move(default_output)) {}

  std::string output;      // HDF5 run log
  std::string checkpoint;  // after parse_or_exit: OUTPUT with .ckpt.h5 unless given
  int checkpoint_every = 10;
  std::string resume;         // "", a checkpoint file, or "auto"
  bool compress_logs = true;  // at a clean end (RunLog::close_compressed)

  // The checkpoint to continue from: --resume, or for 'auto' --checkpoint if it exists; "" for
  // a new run.
  std::string checkpoint_to_resume() const;
};

// A --name/--no-name pair whose default shows in --help and in the run log's config (CLI11
// writes an unset flag as false otherwise).
void add_switch(CLI::App& app, const std::string& names, bool& value,
                const std::string& description);

// --output, --checkpoint, --checkpoint-every, --resume and --compress-logs / --no-compress-logs;
// `step` names what the run counts
// ("generation", "iteration"): a row of the log, the unit of --checkpoint-every.
void add_run_files(CLI::App& app, RunFiles& files, const std::string& step);

// --task-timeout SECONDS: how long one pool item (`item`: what a task computes) may run before
// its task process is killed; it is tried again (PoolOptions::max_retries) and then fails the
// run with one line. The default is far beyond what an item of any shipped config takes (seconds
// at most), so only a stuck simulator or task hits it; 0: no limit.
inline constexpr double kDefaultTaskTimeoutSeconds = 600;
void add_task_timeout(CLI::App& app, double& seconds, const std::string& item);

// The pool's task_timeout for --task-timeout SECONDS (0: none; any positive time is at least 1 ms).
std::chrono::milliseconds task_timeout(double seconds);

// Parses the command line and the --config file. --help prints and exits 0; a bad flag or value
// prints one line naming the program and exits 2. Fills in the default checkpoint file.
void parse_or_exit(CLI::App& app, RunFiles& files, int argc, char** argv);

// Bad input found after parsing: one line naming the program, exit status 2.
[[noreturn]] void reject(const CLI::App& app, const std::string& message);

}  // namespace fiber::rl
