// The names the storage gives links (columns, metadata keys, checkpoint entries): one component
// of an HDF5 path.
#pragma once

#include <string_view>

namespace fiber::rl::hdf5 {

// std::invalid_argument "WHAT name 'NAME' is invalid (...)" unless `name` is non-empty, not ".",
// and without '/' and NUL characters. `what` says what is named, e.g. "checkpoint entry".
void check_name(std::string_view what, std::string_view name);

}  // namespace fiber::rl::hdf5
