#include "fiberrun/mpirun_command.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

namespace fiberrun {
namespace {

// Options that say how many processes to start (or where they come from): without one of
// them fiberrun starts one process, the master.
const std::set<std::string> kCountOptions = {"n",       "np",         "c",   "N",  "npernode",
                                             "pernode", "npersocket", "ppr", "app"};
const std::set<std::string> kHostOptions = {"hostfile", "machinefile", "default-hostfile", "host",
                                            "H"};
constexpr std::string_view kPerResourceMapping = "ppr:";  // --map-by ppr:N:node gives a count
constexpr std::string_view kSeparator = "--";

bool is_option(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

std::string name_of(const std::string& option) {
  return option.substr(option.find_first_not_of('-'));
}

}  // namespace

OptionTable parse_option_table(const std::string& help) {
  OptionTable table;
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string names;
    if (!(words >> names) || !is_option(names)) continue;
    int values = 0;
    std::string word;
    while (words >> word && word.starts_with("<arg")) ++values;
    std::istringstream alternatives(names);
    std::string name;
    while (std::getline(alternatives, name, '|')) {
      if (is_option(name)) table[name_of(name)] = values;
    }
  }
  return table;
}

std::optional<OptionTable> read_mpirun_option_table() {
  std::unique_ptr<FILE, int (*)(FILE*)> help(
      popen("mpirun --allow-run-as-root --help all 2>/dev/null", "r"), pclose);
  if (!help) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (std::size_t read; (read = std::fread(buffer, 1, sizeof buffer, help.get())) > 0;) {
    text.append(buffer, read);
  }
  OptionTable table = parse_option_table(text);
  if (table.empty()) return std::nullopt;
  return table;
}

CommandLine split_at_program(std::span<char* const> arguments,
                             const std::optional<OptionTable>& table) {
  CommandLine command_line;
  std::size_t i = 0;
  bool separated = false;
  while (i < arguments.size() && is_option(arguments[i])) {
    std::string option = arguments[i++];
    if (option == kSeparator) {
      separated = true;
      break;
    }
    if (!table) {  // the options are every word up to the separator
      auto separator = std::find(arguments.begin() + static_cast<std::ptrdiff_t>(i),
                                 arguments.end(), kSeparator);
      if (separator == arguments.end()) {
        throw UsageError(
            "fiberrun: cannot read mpirun's options (mpirun --help all); put -- before the "
            "program");
      }
      command_line.mpirun_options.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i) - 1,
                                         separator);
      i = static_cast<std::size_t>(separator - arguments.begin()) + 1;
      separated = true;
      break;
    }
    command_line.mpirun_options.push_back(option);
    auto known = table->find(name_of(option));
    int values = known == table->end() ? 0 : known->second;  // unknown: mpirun will say so
    for (int v = 0; v < values && i < arguments.size(); ++v) {
      command_line.mpirun_options.push_back(arguments[i++]);
    }
  }
  command_line.program.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i), arguments.end());
  if (command_line.program.empty() && !separated) {
    bool appfile = false;
    for (const auto& option : command_line.mpirun_options) {
      appfile = appfile || (is_option(option) && name_of(option) == "app");
    }
    if (!appfile) throw UsageError("fiberrun: no program to run (fiberrun --help)");
  }
  if (command_line.program.empty() && separated) {
    throw UsageError("fiberrun: no program after --");
  }
  return command_line;
}

bool names_hosts(const CommandLine& command_line) {
  for (const auto& option : command_line.mpirun_options) {
    if (is_option(option) && kHostOptions.contains(name_of(option))) return true;
  }
  return false;
}

std::vector<std::string> mpirun_command(const CommandLine& command_line,
                                        const std::vector<std::string>& supervisor) {
  std::vector<std::string> command{"mpirun"};
  bool has_count = false;
  const auto& options = command_line.mpirun_options;
  for (std::size_t i = 0; i < options.size(); ++i) {
    command.push_back(options[i]);
    if (!is_option(options[i])) continue;
    std::string name = name_of(options[i]);
    has_count = has_count || kCountOptions.contains(name) ||
                (name == "map-by" && i + 1 < options.size() &&
                 options[i + 1].starts_with(kPerResourceMapping));
  }
  if (command_line.program.empty()) return command;  // an appfile names its own programs
  if (!has_count) command.insert(command.end(), {"-n", "1"});
  command.insert(command.end(), supervisor.begin(), supervisor.end());
  command.insert(command.end(), command_line.program.begin(), command_line.program.end());
  return command;
}

}  // namespace fiberrun
