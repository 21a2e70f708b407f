#include "run/command_line.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace fiber::rl {

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
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--resume", files.resume,
                 "continue from this checkpoint; 'auto': from --checkpoint if it exists");
}

void parse_or_exit(CLI::App& app, RunFiles& files, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    std::exit(app.exit(help));
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "%s: %s (%s --help lists the options)\n", app.get_name().c_str(),
                 error.what(), app.get_name().c_str());
    std::exit(2);
  }
  if (files.checkpoint.empty()) {
    files.checkpoint = std::filesystem::path(files.output).replace_extension(".ckpt.h5").string();
  }
}

void reject(const CLI::App& app, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), message.c_str());
  std::exit(2);
}

}  // namespace fiber::rl
