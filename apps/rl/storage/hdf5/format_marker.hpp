// The format marker: the root attributes `format` (e.g. "fiber-runlog") and `version` that say
// which fiber file a file is, written when a file is created and checked when one is opened.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/hdf5/file.hpp"

namespace fiber::rl::hdf5 {

struct FormatMarker {
  std::string_view format;   // "fiber-runlog"
  std::int64_t version = 0;  // the version this program writes and reads
  std::string_view noun;     // "run log": what the messages call such a file
};

void write_format_marker(const File& file, const FormatMarker& marker);

// nullopt if `file` carries `marker`; otherwise one line without the path saying what it is
// instead: "not a fiber run log (an HDF5 file without the 'format' marker)", "not a fiber run log
// (its format is 'fiber-checkpoint', not 'fiber-runlog')", "unsupported run log version 2 (this
// program reads version 1)", "damaged (no readable 'version' attribute)". hdf5::Error if the root
// group cannot be read.
std::optional<std::string> format_marker_problem(const File& file, const FormatMarker& marker);

}  // namespace fiber::rl::hdf5
