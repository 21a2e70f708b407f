// How the benchmarks' programs read their flags (CLI11): --help prints the usage; a bad flag is
// one line naming the program, and exit status 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

namespace fiber_benchmarks {

// The status main should return now, or nothing to go on. main returns it rather than exiting,
// so that a fiber::Runtime in scope ends properly.
inline std::optional<int> parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "%s: %s (--help lists the options)\n", app.get_name().c_str(),
                 error.what());
    return 2;
  }
  return std::nullopt;
}

}  // namespace fiber_benchmarks
