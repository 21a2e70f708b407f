// What a writer does to a run log that a crash may have left mid-append, when it opens it:
// refuses a checksum mismatch that no torn append explains, cuts every column back to the
// complete rows, repairs the chunk a torn append broke, and counts the rows again.
#include "storage/run_log_impl.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/hdf5/attribute.hpp"
#include "storage/hdf5/fletcher32.hpp"

namespace fiber::rl {

namespace {

constexpr std::size_t kValueBytes = 8;  // int64 and float64 alike

}  // namespace

void RunLog::Impl::recover(const std::vector<hsize_t>& lengths,
                           std::optional<std::int64_t> committed) {
  for (std::size_t i = 0; i < columns.size(); ++i) verify_complete_rows(i);
  // Cut every column back to the complete rows, and repair a chunk torn by a crash.
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (lengths[i] != rows) {
      attempt("cannot cut the columns back to " + std::to_string(rows) + " complete rows",
              [&] { datasets[i].set_length(rows); });
    }
  }
  if (!committed) {
    attempt("cannot write the row count",
            [&] { hdf5::write_attribute(log_group, kRowsAttribute, std::int64_t{0}); });
  }
  flush();
  repair_torn_chunks();
  if (committed != static_cast<std::int64_t>(rows)) commit_rows(rows);
}

// Checks the chunks of column i that hold complete rows, before anything is written. A chunk
// whose checksum fails is refused as corrupted unless a crash in the middle of an append
// explains it: the complete rows are intact and the stored checksum is still that of the chunk
// before the torn write (its complete rows, then the fill value, zeros).
void RunLog::Impl::verify_complete_rows(std::size_t i) const {
  const std::size_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  const std::size_t chunk_bytes = kChunkRows * kValueBytes + hdf5::kChecksumBytes;
  const std::string column = "/log/" + columns[i].name;
  std::vector<unsigned char> chunk(chunk_bytes);
  for (std::size_t c = 0; c < chunks; ++c) {
    const hsize_t offset = c * kChunkRows;
    if (attempt_damaged(column, [&] { return datasets[i].stored_chunk_size(offset); }) !=
        chunk_bytes) {
      fail("damaged (" + column + " has a chunk of an unexpected size)");
    }
    attempt("cannot read " + column, [&] { datasets[i].read_stored_chunk(offset, chunk); });
    const std::size_t data_bytes = chunk_bytes - hdf5::kChecksumBytes;
    const std::uint32_t stored = hdf5::little_endian_uint32(chunk.data() + data_bytes);
    if (hdf5::matches_fletcher32(chunk.data(), data_bytes, stored)) continue;
    const std::size_t complete = std::min<std::size_t>(rows - c * kChunkRows, kChunkRows);
    std::fill(chunk.begin() + static_cast<std::ptrdiff_t>(complete * kValueBytes),
              chunk.begin() + static_cast<std::ptrdiff_t>(data_bytes), 0);
    if (hdf5::matches_fletcher32(chunk.data(), data_bytes, stored)) continue;  // torn
    fail("damaged (checksum mismatch in " + column + ", rows " + std::to_string(offset) + "-" +
         std::to_string(offset + complete - 1) +
         "; refused, nothing was changed: restore the file from a copy, or start a new run)");
  }
}

// After a crash in the middle of an append, the chunk holding the last rows may have been
// written only in part: its complete rows are intact but its checksum no longer matches
// (verify_complete_rows() made sure that is all). Where the checksum fails, reads the rows
// again without checking and writes them back (new checksums).
void RunLog::Impl::repair_torn_chunks() {
  if (rows == 0) return;
  std::vector<std::uint64_t> buffer(rows);  // kValueBytes per value, whatever the column type
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const hdf5::Dataset& dataset = datasets[i];
    const hid_t type = memory_type(columns[i].type);
    const std::string column = "/log/" + columns[i].name;
    try {
      dataset.read(type, buffer.data(), 0, rows);
      continue;
    } catch (const hdf5::Error& error) {
      if (!error.is_checksum_mismatch()) fail("cannot read " + column + ": " + error.description());
    }
    try {
      dataset.read(type, buffer.data(), 0, rows, hdf5::Checksums::skipped);
      dataset.write(type, buffer.data(), 0, rows);
    } catch (const hdf5::Error&) {
      fail("damaged (cannot repair " + column + ")");
    }
    flush();
    try {
      dataset.read(type, buffer.data(), 0, rows);
    } catch (const hdf5::Error&) {
      fail("damaged (checksum mismatch in " + column + ")");
    }
  }
}

}  // namespace fiber::rl
