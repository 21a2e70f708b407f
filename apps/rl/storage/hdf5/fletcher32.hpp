// HDF5's Fletcher32 checksum of a chunk, computed as its filter does, to check stored chunks
// directly (Dataset::read_stored_chunk).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fiber::rl::hdf5 {

// The bytes HDF5 appends to each chunk for its checksum.
inline constexpr std::size_t kChecksumBytes = 4;

// The 4-byte little-endian integer at `bytes` (how HDF5 stores a chunk's checksum).
std::uint32_t little_endian_uint32(const unsigned char* bytes);

// True if `stored` is HDF5's Fletcher32 checksum of the `size` bytes at `data` (as its filter
// computes it when writing a chunk; or byte-swapped, as HDF5 before 1.6.3 wrote it).
bool matches_fletcher32(const unsigned char* data, std::size_t size, std::uint32_t stored);

}  // namespace fiber::rl::hdf5
