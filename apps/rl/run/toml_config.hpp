// Reads --config files for CLI11 after checking them with toml++, so a fault in one is one line
// naming the file, line and column: a TOML syntax error, a [section] (options have none), or a
// key that is no option of the program, or a value an option's checks refuse. CLI11's own TOML
// reader then gives the values to the options, as flags.
//
//   app.set_config("--config");
//   app.config_formatter(std::make_shared<fiber::rl::TomlConfig>(app));
#pragma once

#include <CLI/CLI.hpp>

#include <istream>
#include <vector>

namespace fiber::rl {

class TomlConfig : public CLI::ConfigTOML {
 public:
  // `app` gives the file's name (its --config value) and the options a key may name.
  explicit TomlConfig(CLI::App& app) : app_(app) {}

  // Throws CLI::ConfigError "FILE:LINE:COLUMN: what" for a file that is not TOML, holds
  // something other than the program's options, or a value their checks refuse.
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  CLI::App& app_;
};

}  // namespace fiber::rl
