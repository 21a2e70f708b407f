#include "run/toml_config.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <iterator>
#include <sstream>
#include <string>

namespace fiber::rl {

namespace {

std::string where(const std::string& file, const toml::source_region& region) {
  return fmt::format("{}:{}:{}", file, region.begin.line, region.begin.column);
}

}  // namespace

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  const std::string text(std::istreambuf_iterator<char>(input), {});
  const std::string file = app_.get_config_ptr()->as<std::string>();
  toml::table table;
  try {
    table = toml::parse(text, file);
  } catch (const toml::parse_error& error) {
    throw CLI::ConfigError(fmt::format("{}: {}", where(file, error.source()), error.description()));
  }
  for (const auto& [key, value] : table) {
    if (value.is_table()) {
      throw CLI::ConfigError(fmt::format("{}: [{}]: sections are not options; write the keys alone",
                                         where(file, key.source()), key.str()));
    }
    if (app_.get_option_no_throw("--" + std::string(key.str())) == nullptr) {
      throw CLI::ConfigError(
          fmt::format("{}: unknown option '{}'", where(file, key.source()), key.str()));
    }
  }
  std::istringstream checked(text);
  return CLI::ConfigTOML::from_config(checked);
}

}  // namespace fiber::rl
