// Scalar attributes of an HDF5 object (file, group or dataset): UTF-8 strings and int64s.
// An HDF5 failure throws hdf5::Error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/hdf5/handle.hpp"

namespace fiber::rl::hdf5 {

bool has_attribute(const Handle& object, const char* name);

// Writes `name` = `value`, replacing an attribute of that name.
void write_attribute(const Handle& object, const char* name, std::string_view value);
// Writes `name` = `value`: in place if the attribute exists (one write, nothing deleted, so that a
// crash leaves either value), created otherwise.
void write_attribute(const Handle& object, const char* name, std::int64_t value);

// The attribute's value; nullopt if it is missing or of another type.
std::optional<std::string> read_string_attribute(const Handle& object, const char* name);
std::optional<std::int64_t> read_int64_attribute(const Handle& object, const char* name);

}  // namespace fiber::rl::hdf5
