// fiberrun's command line, split where the program starts, and the mpirun command built from it.
// mpirun's options are told apart from the program with Open MPI's own option table (the
// output of `mpirun --help all`: each option's names and how many values it takes), so every
// option, value-taking or not, reaches mpirun as given; `--` ends the options explicitly.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiberrun {

// A command line fiberrun cannot start (one line for the user).
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// mpirun's option names without their leading dashes ("np", "mca", "x"), each with how many
// values follow it.
using OptionTable = std::map<std::string, int>;

// Parses the option lines of `mpirun --help all` ("-c|-np|--np <arg0>  Number of ...").
OptionTable parse_option_table(const std::string& help);
// The table of the mpirun on PATH; nullopt if it cannot be read.
std::optional<OptionTable> read_mpirun_option_table();

struct CommandLine {
  std::vector<std::string> mpirun_options;  // as given, without a `--` separator
  std::vector<std::string> program;         // the program and its arguments
};

// Splits fiberrun's arguments at the program: at the first word that is neither an mpirun
// option nor one of an option's values, or at a `--` among the options. Without a table
// (mpirun's could not be read) only `--` can tell where the program starts.
CommandLine split_at_program(std::span<char* const> arguments,
                             const std::optional<OptionTable>& table);

// Whether the options name the hosts to run on (--hostfile, --host, ...): the job may then span
// machines, as with a batch system.
bool names_hosts(const CommandLine& command_line);

// mpirun's command: the options, `-n 1` unless they give a process count or placement, then
// `supervisor` (the words that start fiberrun's rank supervisor) before the program.
std::vector<std::string> mpirun_command(const CommandLine& command_line,
                                        const std::vector<std::string>& supervisor);

}  // namespace fiberrun
