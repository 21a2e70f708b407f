#include "storage/hdf5/dataset.hpp"

#include <cstdint>

#include "storage/hdf5/error.hpp"
#include "storage/hdf5/property_list.hpp"

namespace fiber::rl::hdf5 {

Dataset::Dataset(hid_t id) : Handle(checked_id(id), H5Dclose) {}

Dataset Dataset::create_checksummed(const Group& parent, const char* name, hid_t file_type,
                                    hsize_t length, hsize_t chunk_length) {
  const Dataspace space = Dataspace::vector(length, true);
  const PropertyList dcpl = PropertyList::checksummed_chunks(chunk_length);
  return Dataset(
      H5Dcreate2(parent.id(), name, file_type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT));
}

Dataset Dataset::create_scalar(const Group& parent, const char* name, const Datatype& type) {
  return Dataset(H5Dcreate2(parent.id(), name, type.id(), Dataspace::scalar().id(), H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT));
}

Dataset Dataset::open(const Group& parent, const char* name) {
  return Dataset(H5Dopen2(parent.id(), name, H5P_DEFAULT));
}

Datatype Dataset::type() const { return Datatype(H5Dget_type(id())); }

Dataspace Dataset::space() const { return Dataspace(H5Dget_space(id())); }

hsize_t Dataset::length() const { return space().dimensions().at(0); }

void Dataset::set_length(hsize_t length) const {
  const hsize_t size[1] = {length};
  check(H5Dset_extent(id(), size));
}

void Dataset::read(hid_t memory_type, void* out, hsize_t first, hsize_t count,
                   Checksums checksums) const {
  Dataspace file_space = space();
  file_space.select_range(first, count);
  const Dataspace memory_space = Dataspace::vector(count);
  const PropertyList dxpl =
      checksums == Checksums::skipped ? PropertyList::unchecked_transfer() : PropertyList();
  check(H5Dread(id(), memory_type, memory_space.id(), file_space.id(),
                dxpl ? dxpl.id() : H5P_DEFAULT, out));
}

void Dataset::write(hid_t memory_type, const void* data, hsize_t first, hsize_t count) const {
  Dataspace file_space = space();
  file_space.select_range(first, count);
  const Dataspace memory_space = Dataspace::vector(count);
  check(H5Dwrite(id(), memory_type, memory_space.id(), file_space.id(), H5P_DEFAULT, data));
}

void Dataset::read_all(hid_t memory_type, void* out) const {
  check(H5Dread(id(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out));
}

void Dataset::write_all(hid_t memory_type, const void* data) const {
  check(H5Dwrite(id(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
}

bool Dataset::compressed() const {
  const Handle dcpl(checked_id(H5Dget_create_plist(id())), H5Pclose);
  const int filters = H5Pget_nfilters(dcpl.id());
  check(filters);
  for (int k = 0; k < filters; ++k) {
    unsigned flags = 0;
    std::size_t values = 0;
    unsigned filter_config = 0;
    const H5Z_filter_t filter = H5Pget_filter2(dcpl.id(), static_cast<unsigned>(k), &flags, &values,
                                               nullptr, 0, nullptr, &filter_config);
    check(filter);
    if (filter != H5Z_FILTER_FLETCHER32 && filter != H5Z_FILTER_SHUFFLE) return true;
  }
  return false;
}

hsize_t Dataset::stored_chunk_size(hsize_t offset) const {
  const hsize_t position[1] = {offset};
  hsize_t stored_size = 0;
  check(H5Dget_chunk_storage_size(id(), position, &stored_size));
  return stored_size;
}

void Dataset::read_stored_chunk(hsize_t offset, std::vector<unsigned char>& chunk) const {
  const hsize_t position[1] = {offset};
  std::uint32_t filters = 0;
  check(H5Dread_chunk(id(), H5P_DEFAULT, position, &filters, chunk.data()));
}

}  // namespace fiber::rl::hdf5
