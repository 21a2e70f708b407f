#include "storage/hdf5/dataspace.hpp"

#include "storage/hdf5/error.hpp"

namespace fiber::rl::hdf5 {

Dataspace::Dataspace(hid_t id) : Handle(checked_id(id), H5Sclose) {}

Dataspace Dataspace::scalar() { return Dataspace(H5Screate(H5S_SCALAR)); }

Dataspace Dataspace::vector(hsize_t length, bool extendible) {
  const hsize_t dims[1] = {length};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  return Dataspace(H5Screate_simple(1, dims, extendible ? max_dims : nullptr));
}

int Dataspace::rank() const {
  const int rank = H5Sget_simple_extent_ndims(id());
  if (rank < 0) throw last_error();
  return rank;
}

std::vector<hsize_t> Dataspace::dimensions() const {
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank()));
  if (H5Sget_simple_extent_dims(id(), dims.data(), nullptr) < 0) throw last_error();
  return dims;
}

hssize_t Dataspace::element_count() const {
  const hssize_t count = H5Sget_simple_extent_npoints(id());
  if (count < 0) throw last_error();
  return count;
}

void Dataspace::select_range(hsize_t first, hsize_t count) {
  const hsize_t start[1] = {first};
  const hsize_t n[1] = {count};
  check(H5Sselect_hyperslab(id(), H5S_SELECT_SET, start, nullptr, n, nullptr));
}

}  // namespace fiber::rl::hdf5
