#include "run/command_line.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "run/exit_status.hpp"
#include "run/toml_config.hpp"

namespace fiber::rl {

namespace {

// A bound as a person writes it: 10000000, not 1e+07 or 10000000.000000.
std::string readable(double bound) {
  constexpr double kExactIntegers = 9'007'199'254'740'992.0;  // 2^53
  if (bound == std::trunc(bound) && std::abs(bound) < kExactIntegers) {
    return fmt::format("{}", static_cast<std::int64_t>(bound));
  }
  return fmt::format("{}", bound);
}

// `accepts` says whether a finite number is in the range `range` describes ("> 0").
template <class Accepts>
CLI::Validator finite_number(const std::string& range, Accepts accepts) {
  std::string expected = range.empty() ? "a finite number" : "a finite number " + range;
  return CLI::Validator(
      [expected, accepts](std::string& input) -> std::string {
        char* end = nullptr;
        double value = std::strtod(input.c_str(), &end);
        bool number = !input.empty() && end == input.c_str() + input.size();
        if (number && std::isfinite(value) && accepts(value)) return "";
        return "must be " + expected + ", not " + input;
      },
      range.empty() ? "FINITE" : "FINITE " + range);
}

}  // namespace

CLI::Validator finite() {
  return finite_number("", [](double) { return true; });
}

CLI::Validator positive() {
  return finite_number("> 0", [](double value) { return value > 0; });
}

CLI::Validator non_negative() {
  return finite_number(">= 0", [](double value) { return value >= 0; });
}

CLI::Validator in_range(double min, double max) {
  return finite_number(fmt::format("in [{}, {}]", readable(min), readable(max)),
                       [min, max](double value) { return value >= min && value <= max; });
}

std::string RunFiles::checkpoint_to_resume() const {
  if (resume != "auto") return resume;
  return std::filesystem::exists(checkpoint) ? checkpoint : "";
}

void add_switch(CLI::App& app, const std::string& names, bool& value,
                const std::string& description) {
  app.add_flag(names, value, description)->default_str(value ? "true" : "false");
}

void add_run_files(CLI::App& app, RunFiles& files, const std::string& step) {
  app.add_option("--output", files.output, "HDF5 run log (one row per " + step + ")")
      ->capture_default_str();
  app.add_option("--checkpoint", files.checkpoint,
                 "checkpoint file (default: OUTPUT with .ckpt.h5)");
  app.add_option("--checkpoint-every", files.checkpoint_every, step + "s between checkpoints")
      ->check(positive())
      ->capture_default_str();
  app.add_option("--resume", files.resume,
                 "continue from this checkpoint; 'auto': from --checkpoint if it exists");
  add_switch(app, "--compress-logs,!--no-compress-logs", files.compress_logs,
             "compress the run log and rollout logs when the run ends or is stopped (a resumed "
             "run decompresses them first); --no-compress-logs: leave them uncompressed");
}

void add_task_timeout(CLI::App& app, double& seconds, const std::string& item) {
  // The pool sends a timeout in milliseconds as 32 bits: at most about 49 days.
  constexpr double kLongestTaskTimeoutSeconds = 4'000'000;
  app.add_option("--task-timeout", seconds,
                 "seconds " + item +
                     " may run before it is killed; tried again twice, then the run fails "
                     "(a stuck simulator); 0: no limit")
      ->check(in_range(0, kLongestTaskTimeoutSeconds))
      ->capture_default_str();
}

std::chrono::milliseconds task_timeout(double seconds) {
  if (seconds <= 0) return std::chrono::milliseconds{0};
  auto milliseconds = std::llround(seconds * 1000);
  return std::chrono::milliseconds{std::max<long long>(1, milliseconds)};
}

void parse_or_exit(CLI::App& app, RunFiles& files, int argc, char** argv) {
  app.config_formatter(std::make_shared<TomlConfig>(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    std::exit(app.exit(help));
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "%s: %s (%s --help lists the options)\n", app.get_name().c_str(),
                 error.what(), app.get_name().c_str());
    std::exit(kExitBadInput);
  }
  if (files.checkpoint.empty()) {
    files.checkpoint = std::filesystem::path(files.output).replace_extension(".ckpt.h5").string();
  }
}

void reject(const CLI::App& app, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), message.c_str());
  std::exit(kExitBadInput);
}

}  // namespace fiber::rl
