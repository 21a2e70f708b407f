// RunLog::Impl: an open run log's state and the steps that the files defining RunLog share:
// run_log.cpp (create, open, appends, reads, metadata), run_log_recovery.cpp (what a writer
// repairs after a crash) and run_log_compression.cpp (the compressed copy at a clean close, and
// the uncompressed one a writer appends to). Private to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/hdf5/dataset.hpp"
#include "storage/hdf5/error.hpp"
#include "storage/hdf5/file.hpp"
#include "storage/hdf5/file_copy.hpp"
#include "storage/hdf5/group.hpp"
#include "storage/run_log.hpp"

namespace fiber::rl {

struct RunLog::Impl {
  static constexpr const char* kRowsAttribute = "rows";
  // 8 KiB per chunk (and checksum) for a float64 column.
  static constexpr hsize_t kChunkRows = 1024;

  std::filesystem::path path;
  bool writable = false;
  bool closed = false;
  hdf5::File file;
  hdf5::Group log_group;
  hdf5::Group meta_group;  // may be invalid in a read-only log without /meta
  std::vector<Column> columns;
  std::vector<hdf5::Dataset> datasets;  // one per column
  std::size_t rows = 0;

  static hid_t memory_type(Type type);

  // Throws RunLogError "run log PATH: WHAT".
  [[noreturn]] void fail(const std::string& what) const;

  // Runs `step`; an hdf5::Error ends it as a RunLogError "WHAT: why".
  template <class Step>
  auto attempt(const std::string& what, Step&& step) const {
    try {
      return step();
    } catch (const hdf5::Error& error) {
      fail(what + ": " + error.description());
    }
  }
  // The same, as "damaged (WHAT: why)".
  template <class Step>
  auto attempt_damaged(const std::string& what, Step&& step) const {
    try {
      return step();
    } catch (const hdf5::Error& error) {
      fail("damaged (" + what + ": " + error.description() + ")");
    }
  }

  std::size_t index_of(std::string_view name) const;
  void require_writable(const char* action) const;
  void flush();
  // Records that the first n rows are complete: the `rows` attribute of /log, written after the
  // rows' data has been flushed. A crash before it leaves the row uncounted (and dropped).
  void commit_rows(std::size_t n);
  void close();

  // run_log.cpp: a new log, an existing one opened, rows written and read, metadata.

  // The groups, attributes and (empty) columns of a new log, in the new file `path`.
  void create_layout(const std::vector<Column>& layout);
  // Opens the columns under /log, reading their names, types and lengths (into `lengths`).
  void open_columns(std::vector<hsize_t>& lengths);
  void check_types(const Row& row) const;
  void write_rows(const std::vector<Row>& block);
  void undo_extension(std::size_t last) noexcept;
  template <class T>
  std::vector<T> read_column(std::size_t i, hid_t type) const;
  std::string read_meta(const std::string& key) const;

  // run_log_recovery.cpp: a log opened for writing made whole again after a crash, given each
  // column's length and the stored row count (if any); `rows` is the complete rows already.
  void recover(const std::vector<hsize_t>& lengths, std::optional<std::int64_t> committed);
  void verify_complete_rows(std::size_t i) const;
  void repair_torn_chunks();

  // run_log_compression.cpp: the file replaced by a copy with other chunk filters.
  bool any_column_compressed() const;
  void rewrite(const hdf5::ChunkFilters& filters, const std::string& what);
  void remove_interrupted_rewrite() const;
};

}  // namespace fiber::rl
