// hdf5::Dataset: a dataset and its data. The storage's datasets are 1-D, chunked and extendible,
// with a Fletcher32 checksum per chunk (create_checksummed); the run log's metadata are scalar
// strings (create_scalar). An HDF5 failure throws hdf5::Error (a damaged chunk: one whose
// is_checksum_mismatch()).
#pragma once

#include <vector>

#include "storage/hdf5/dataspace.hpp"
#include "storage/hdf5/datatype.hpp"
#include "storage/hdf5/group.hpp"

namespace fiber::rl::hdf5 {

enum class Checksums { verified, skipped };

class Dataset : public Handle {
 public:
  Dataset() = default;

  // A new 1-D dataset of `length` elements of `file_type`, extendible, stored in chunks of
  // `chunk_length` elements, each with a Fletcher32 checksum.
  static Dataset create_checksummed(const Group& parent, const char* name, hid_t file_type,
                                    hsize_t length, hsize_t chunk_length);
  // A new scalar dataset (one element) of `type`.
  static Dataset create_scalar(const Group& parent, const char* name, const Datatype& type);
  static Dataset open(const Group& parent, const char* name);

  Datatype type() const;
  Dataspace space() const;
  // The length of a 1-D dataset.
  hsize_t length() const;
  void set_length(hsize_t length) const;

  // Reads or writes `count` elements from element `first` on, in `memory_type`.
  void read(hid_t memory_type, void* out, hsize_t first, hsize_t count,
            Checksums checksums = Checksums::verified) const;
  void write(hid_t memory_type, const void* data, hsize_t first, hsize_t count) const;
  // Reads or writes the whole dataset.
  void read_all(hid_t memory_type, void* out) const;
  void write_all(hid_t memory_type, const void* data) const;

  // True if a filter changes the size of the stored chunks (deflate, as h5repack -f GZIP adds it,
  // szip, ...; Fletcher32 and shuffle do not): such a chunk moves in the file when rewritten.
  bool compressed() const;
  // The size of the chunk at element `offset` as stored, and its bytes (data, then the 4-byte
  // checksum) into `chunk`, which must have that size.
  hsize_t stored_chunk_size(hsize_t offset) const;
  void read_stored_chunk(hsize_t offset, std::vector<unsigned char>& chunk) const;

 private:
  explicit Dataset(hid_t id);
};

}  // namespace fiber::rl::hdf5
