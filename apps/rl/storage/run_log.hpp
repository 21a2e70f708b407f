// RunLog: the learning curve of a run, one row per generation (or iteration), in an HDF5 file.
//
//   using fiber::rl::RunLog;
//   RunLog log = RunLog::create("run/log.h5", {{"generation", RunLog::Type::int64},
//                                              {"timesteps", RunLog::Type::int64},
//                                              {"return_mean", RunLog::Type::float64}});
//   log.set_meta("environment", "CartPole");
//   log.append({g, steps, mean});                                      // in column order, or
//   log.append({{"generation", g}, {"timesteps", steps}, {"return_mean", mean}});  // by name
//
//   // resuming from a checkpoint taken after generation 41 (42 rows):
//   RunLog log = RunLog::open("run/log.h5");
//   log.truncate(42);  // drop the rows written after the checkpoint: no generation twice
//
// Layout: each column is a chunked, extendible 1-D dataset /log/<name> (float64 or int64, with
// Fletcher32 checksums; written uncompressed, since appending to compressed chunks is not
// crash-safe, and compressed at a clean close by close_compressed()); the attribute /log@rows
// counts the complete rows; /meta/<key> are scalar UTF-8 string datasets (config text, versions,
// hosts, start time); the root carries `format` = "fiber-runlog" and `version` = 1. h5py:
// f["log/return_mean"][:f["log"].attrs["rows"]], f["meta/environment"][()].decode().
//
// Crash safety: append() writes the row, flushes (H5Fflush), then raises /log@rows and flushes
// again, so a crash of the process loses at most the row being written; sync() also asks the OS
// to put the file on disk. Opening for writing after a crash cuts the columns back to the counted
// rows and repairs a chunk whose checksum a torn write broke (its counted rows are intact, and
// its stored checksum is still that of the chunk before the append). Any other checksum
// mismatch is corruption: opening for writing refuses it (RunLogError naming the column and rows)
// before changing anything. HDF5 itself is not journaled: a crash can in principle also tear its
// metadata, which then fails to open as "damaged".
//
// The file is locked with HDF5's lock while open for writing (where the file system supports
// locks, and unless HDF5_USE_FILE_LOCKING=FALSE): a second writer fails with RunLogError. A run
// claims its files with FileLock (storage/file_lock.hpp) too, which does not depend on HDF5's.
// Readers (Access::read_only, scripts/plot.py) take no lock, so they can follow a run as it writes;
// they see the rows counted when they opened the log. Not thread-safe: use one thread at a time.
//
// Compression: close_compressed() ends a run's writing with a compressed copy of the whole file
// (shuffle, deflate, Fletcher32), written beside it as PATH.tmp, fsynced and renamed over it, so a
// crash leaves the uncompressed log or the compressed one, never a mix; opening a compressed log
// for writing first makes an uncompressed copy the same way (a damaged chunk refuses it before
// anything is replaced). The next writer removes a PATH.tmp a crash left; readers ignore it.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/error.hpp"

namespace fiber::rl {

class RunLog {
 public:
  enum class Type { float64, int64 };

  struct Column {
    std::string name;  // not empty, no '/', not "."
    Type type = Type::float64;
    bool operator==(const Column&) const = default;
  };

  // One cell: a number, from any arithmetic type. Integers fit both column types (converted to
  // double in a float64 column); a floating-point value in an int64 column is an error.
  class Value {
   public:
    // Implicit on purpose: rows are written as {1, 2.5, ...}.
    Value(double v) : real_(v) {}
    Value(float v) : real_(v) {}
    template <std::integral T>
    requires(!std::same_as<T, bool>) Value(T v)
        : integer_(static_cast<std::int64_t>(v)), is_integer_(true) {
      if (!std::in_range<std::int64_t>(v)) {
        throw std::invalid_argument("run log value does not fit in int64");
      }
    }
    bool is_integer() const { return is_integer_; }
    double as_double() const { return is_integer_ ? static_cast<double>(integer_) : real_; }
    std::int64_t as_int64() const { return integer_; }  // only if is_integer()

   private:
    double real_ = 0;
    std::int64_t integer_ = 0;
    bool is_integer_ = false;
  };

  using Row = std::vector<Value>;                              // in column order
  using NamedRow = std::map<std::string, Value, std::less<>>;  // column name -> value

  enum class Access { read_only, read_write };
  enum class IfExists { fail, overwrite };

  // Creates a new log with these columns (at least one; unique valid names, else
  // std::invalid_argument). An existing file is an error (RunLogError) unless
  // `if_exists` is IfExists::overwrite.
  static RunLog create(const std::filesystem::path& path, std::vector<Column> columns,
                       IfExists if_exists = IfExists::fail);
  // Opens an existing log, reading its columns back. RunLogError if the file is missing, not a
  // run log, damaged or (read_write) locked by another writer.
  static RunLog open(const std::filesystem::path& path, Access access = Access::read_write);

  RunLog(RunLog&&) noexcept;
  RunLog& operator=(RunLog&&) noexcept;
  ~RunLog();  // closes (errors on that final close are ignored: call close() to see them)

  const std::filesystem::path& path() const;
  const std::vector<Column>& columns() const;
  bool has_column(std::string_view name) const;
  std::size_t rows() const;
  bool writable() const;

  // Appends one row and flushes. std::invalid_argument if the row does not have one value per
  // column, names an unknown column (NamedRow) or puts a floating-point value in an int64
  // column; nothing is written then. RunLogError if the file cannot be written.
  void append(std::initializer_list<Value> row);  // log.append({g, steps, mean})
  void append(const Row& row);
  void append(const NamedRow& row);  // log.append({{"generation", g}, {"return_mean", m}})
  // Appends many rows at once, counted together (one flush, then one count): a reader or a crash
  // sees all of them or none. Checked as append() checks a row; nothing is written on an error.
  void append_rows(const std::vector<Row>& rows);

  // Keeps the first `rows` rows (std::invalid_argument if that is more than rows()).
  void truncate(std::size_t rows);

  // A whole column. doubles() reads any column (int64 converted); int64s() only int64 ones.
  // std::invalid_argument for an unknown column (or int64s() of a float64 column).
  std::vector<double> doubles(std::string_view column) const;
  std::vector<std::int64_t> int64s(std::string_view column) const;

  // Run metadata, stored as /meta/<key> (key: not empty, no '/', not "."; value: text without
  // NUL characters, else std::invalid_argument). Setting a key again replaces its value.
  void set_meta(std::string_view key, std::string_view value);
  std::optional<std::string> meta(std::string_view key) const;
  std::map<std::string, std::string> meta() const;

  void flush();  // H5Fflush (append() already does)
  void sync();   // flush, then fsync the file
  void close();  // closes now; further calls throw RunLogError
  // Closes, replacing the file by a compressed copy of it (every group, dataset and attribute;
  // the columns chunked as before, extendible, with shuffle + deflate + Fletcher32). Only a
  // writable log. On an error (RunLogError) the log is closed and the file left uncompressed.
  void close_compressed();

 private:
  struct Impl;
  explicit RunLog(std::unique_ptr<Impl> impl);
  Impl& impl() const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace fiber::rl
