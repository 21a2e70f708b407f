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

// The message of the first check of `option` that refuses `input`; "" if none does.
std::string refusal(CLI::Option& option, const std::string& input) {
  for (int index = 0;; ++index) {
    const CLI::Validator* check = nullptr;
    try {
      check = option.get_validator(index);
    } catch (const CLI::OptionNotFound&) {
      return "";  // past the last check (CLI11 does not say how many there are)
    }
    if (auto message = (*check)(input); !message.empty()) return message;
  }
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
  // The values as CLI11 reads them, checked here to say where they are. An option also given on
  // the command line keeps that value, as in CLI11: its value in the file is not used.
  std::istringstream checked(text);
  std::vector<CLI::ConfigItem> values = CLI::ConfigTOML::from_config(checked);
  for (const auto& item : values) {
    CLI::Option* option = app_.get_option_no_throw("--" + item.name);
    auto entry = table.find(item.name);
    if (option == nullptr || option->count() > 0 || entry == table.end()) continue;
    for (const auto& value : item.inputs) {
      if (auto message = refusal(*option, value); !message.empty()) {
        throw CLI::ConfigError(
            fmt::format("{}: --{}: {}", where(file, entry->first.source()), item.name, message));
      }
    }
  }
  return values;
}

}  // namespace fiber::rl
