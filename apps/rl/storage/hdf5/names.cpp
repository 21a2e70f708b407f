#include "storage/hdf5/names.hpp"

#include <stdexcept>
#include <string>

namespace fiber::rl::hdf5 {

void check_name(std::string_view what, std::string_view name) {
  if (name.empty() || name == "." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    throw std::invalid_argument(std::string(what) + " name '" + std::string(name) +
                                "' is invalid (it must be non-empty, not '.', without '/')");
  }
}

}  // namespace fiber::rl::hdf5
