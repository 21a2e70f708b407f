#include "storage/hdf5/datatype.hpp"

#include <algorithm>

#include "storage/hdf5/error.hpp"

namespace fiber::rl::hdf5 {

Datatype::Datatype(hid_t id) : Handle(checked_id(id), H5Tclose) {}

Datatype Datatype::fixed_string(std::size_t size) {
  Datatype type(H5Tcopy(H5T_C_S1));
  check(H5Tset_size(type.id(), std::max<std::size_t>(size, 1)));
  check(H5Tset_strpad(type.id(), H5T_STR_NULLPAD));
  check(H5Tset_cset(type.id(), H5T_CSET_UTF8));
  return type;
}

Datatype Datatype::variable_string() {
  Datatype type(H5Tcopy(H5T_C_S1));
  check(H5Tset_size(type.id(), H5T_VARIABLE));
  check(H5Tset_cset(type.id(), H5T_CSET_UTF8));
  return type;
}

H5T_class_t Datatype::type_class() const {
  const H5T_class_t type_class = H5Tget_class(id());
  if (type_class == H5T_NO_CLASS) throw last_error();
  return type_class;
}

std::size_t Datatype::size() const {
  const std::size_t size = H5Tget_size(id());
  if (size == 0) throw last_error();
  return size;
}

bool Datatype::is_signed() const { return H5Tget_sign(id()) == H5T_SGN_2; }

bool Datatype::is_variable_string() const { return truth(H5Tis_variable_str(id())); }

}  // namespace fiber::rl::hdf5
