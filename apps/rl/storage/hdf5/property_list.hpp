// hdf5::PropertyList: the creation, access and transfer properties the storage uses, each made in
// one place.
#pragma once

#include "storage/hdf5/handle.hpp"

namespace fiber::rl::hdf5 {

enum class Locking { off, on };

class PropertyList : public Handle {
 public:
  PropertyList() = default;

  // For every file: metadata in the 1.8 format or newer (checksummed superblock and object
  // headers, readable by HDF5 1.8+, h5py, h5dump), HDF5's file lock (if `locking` is on) where the
  // file system supports it, and a strong close (closing the file closes everything in it).
  static PropertyList file_access(Locking locking);
  // A 1-D dataset stored in chunks of `chunk_length` elements, each with a Fletcher32 checksum.
  static PropertyList checksummed_chunks(hsize_t chunk_length);
  // A group that remembers the order in which its links were created.
  static PropertyList creation_ordered_group();
  // A read that skips the checksums (to recover data whose checksum a torn write broke).
  static PropertyList unchecked_transfer();

 private:
  explicit PropertyList(hid_t class_id);
};

}  // namespace fiber::rl::hdf5
