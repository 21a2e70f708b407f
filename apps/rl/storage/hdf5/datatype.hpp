// hdf5::Datatype: the type of stored elements: an owned copy (strings), or one of HDF5's
// predefined types (not closed), and what a type is.
#pragma once

#include <cstddef>

#include "storage/hdf5/handle.hpp"

namespace fiber::rl::hdf5 {

class Datatype : public Handle {
 public:
  explicit Datatype(hid_t id);  // takes ownership of a type id (checked)

  // A fixed-length UTF-8 string of `size` bytes (at least 1), NUL-padded.
  static Datatype fixed_string(std::size_t size);
  // A variable-length UTF-8 string.
  static Datatype variable_string();

  H5T_class_t type_class() const;
  std::size_t size() const;
  bool is_signed() const;
  bool is_variable_string() const;
  bool is_fixed_string() const { return type_class() == H5T_STRING && !is_variable_string(); }
};

}  // namespace fiber::rl::hdf5
