// Reads --config files for CLI11 after checking them with toml++, so a fault in one is one line
// naming the file, line and column: a TOML syntax error, a [section] (options have none), or a
// key that is no option of the program. The values then go through CLI11's own TOML reader and
// the options' checks, as flags do.
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
  explicit TomlConfig(const CLI::App& app) : app_(app) {}

  // Throws CLI::ConfigError "FILE:LINE:COLUMN: what" for a file that is not TOML or holds
  // something other than the program's options.
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  const CLI::App& app_;
};

}  // namespace fiber::rl
