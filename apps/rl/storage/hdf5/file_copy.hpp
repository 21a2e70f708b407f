// Copying the whole contents of an HDF5 file into another with other chunk filters: every group
// (with its creation properties, so link creation order is kept), attribute, link and dataset.
// Chunked datasets are re-created (same type, shape, maximum shape, chunks and fill value) with
// the filters asked for, and their data copied in slabs of at most kCopySlabBytes, so that memory
// stays bounded for logs of many gigabytes; the data is read with its checksums verified. Other
// datasets (the run log's scalar strings; variable-length data, which takes no filters) and named
// types are copied as they are (H5Ocopy, which would keep a chunked dataset's old filters).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "storage/hdf5/error.hpp"
#include "storage/hdf5/file.hpp"

namespace fiber::rl::hdf5 {

inline constexpr std::size_t kCopySlabBytes = std::size_t{4} << 20;

// The filters of the copy's chunked datasets: shuffle + deflate at `deflate_level` (if set), then
// Fletcher32 last, so that its checksum covers the bytes as stored.
struct ChunkFilters {
  std::optional<unsigned> deflate_level;  // 1-9; nullopt: not compressed
};

// An hdf5::Error of a copy, with where it arose: the object ("/log/return") and, for a dataset's
// data, its rows ("rows 0-19"), else "".
class CopyError : public Error {
 public:
  CopyError(const Error& cause, std::string object, std::string rows)
      : Error(cause.code(), cause.description()),
        object_(std::move(object)),
        rows_(std::move(rows)) {}
  const std::string& object() const noexcept { return object_; }
  const std::string& rows() const noexcept { return rows_; }

 private:
  std::string object_;
  std::string rows_;
};

// Copies everything in `source` (its root's attributes included) into the empty `target`.
// CopyError where it fails.
void copy_contents(const File& source, const File& target, const ChunkFilters& filters);

}  // namespace fiber::rl::hdf5
