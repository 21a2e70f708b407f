#include "storage/hdf5/property_list.hpp"

#include "storage/hdf5/error.hpp"

namespace fiber::rl::hdf5 {

PropertyList::PropertyList(hid_t class_id) : Handle(checked_id(H5Pcreate(class_id)), H5Pclose) {}

PropertyList PropertyList::file_access(Locking locking) {
  PropertyList fapl(H5P_FILE_ACCESS);
  check(H5Pset_libver_bounds(fapl.id(), H5F_LIBVER_V18, H5F_LIBVER_LATEST));
  // Lock against a second writer, but do not fail on file systems without locks (e.g. Lustre).
  check(H5Pset_file_locking(fapl.id(), locking == Locking::on, true));
  check(H5Pset_fclose_degree(fapl.id(), H5F_CLOSE_STRONG));
  return fapl;
}

PropertyList PropertyList::checksummed_chunks(hsize_t chunk_length) {
  PropertyList dcpl(H5P_DATASET_CREATE);
  const hsize_t chunk[1] = {chunk_length};
  check(H5Pset_chunk(dcpl.id(), 1, chunk));
  check(H5Pset_fletcher32(dcpl.id()));
  return dcpl;
}

PropertyList PropertyList::creation_ordered_group() {
  PropertyList gcpl(H5P_GROUP_CREATE);
  check(H5Pset_link_creation_order(gcpl.id(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  return gcpl;
}

PropertyList PropertyList::unchecked_transfer() {
  PropertyList dxpl(H5P_DATASET_XFER);
  check(H5Pset_edc_check(dxpl.id(), H5Z_DISABLE_EDC));
  return dxpl;
}

}  // namespace fiber::rl::hdf5
