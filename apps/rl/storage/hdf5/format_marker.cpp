#include "storage/hdf5/format_marker.hpp"

#include "storage/hdf5/attribute.hpp"

namespace fiber::rl::hdf5 {

namespace {
constexpr const char* kFormatAttribute = "format";
constexpr const char* kVersionAttribute = "version";
}  // namespace

void write_format_marker(const File& file, const FormatMarker& marker) {
  write_attribute(file, kFormatAttribute, marker.format);
  write_attribute(file, kVersionAttribute, marker.version);
}

std::optional<std::string> format_marker_problem(const File& file, const FormatMarker& marker) {
  const std::string noun(marker.noun);
  const std::optional<std::string> format = read_string_attribute(file, kFormatAttribute);
  if (!format) return "not a fiber " + noun + " (an HDF5 file without the 'format' marker)";
  if (*format != marker.format) {
    return "not a fiber " + noun + " (its format is '" + *format + "', not '" +
           std::string(marker.format) + "')";
  }
  const std::optional<std::int64_t> version = read_int64_attribute(file, kVersionAttribute);
  if (!version) return std::string("damaged (no readable 'version' attribute)");
  if (*version != marker.version) {
    return "unsupported " + noun + " version " + std::to_string(*version) +
           " (this program reads version " + std::to_string(marker.version) + ")";
  }
  return std::nullopt;
}

}  // namespace fiber::rl::hdf5
