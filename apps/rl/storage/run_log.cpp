#include "storage/run_log.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>

#include "storage/file_kind.hpp"
#include "storage/hdf5/attribute.hpp"
#include "storage/hdf5/dataset.hpp"
#include "storage/hdf5/error.hpp"
#include "storage/hdf5/file.hpp"
#include "storage/hdf5/format_marker.hpp"
#include "storage/hdf5/names.hpp"
#include "storage/run_log_impl.hpp"

namespace fiber::rl {

namespace {

constexpr hdf5::FormatMarker kMarker{"fiber-runlog", 1, "run log"};

std::string prefix(const std::filesystem::path& path) { return "run log " + path.string() + ": "; }

void check_name(std::string_view what, std::string_view name) {
  hdf5::check_name("run log " + std::string(what), name);
}

hid_t file_type(RunLog::Type type) {
  return type == RunLog::Type::int64 ? H5T_STD_I64LE : H5T_IEEE_F64LE;
}

std::string column_list(const std::vector<RunLog::Column>& columns) {
  std::string out;
  for (const RunLog::Column& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

}  // namespace

void RunLog::Impl::fail(const std::string& what) const { throw RunLogError(prefix(path) + what); }

hid_t RunLog::Impl::memory_type(Type type) {
  return type == Type::int64 ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
}

std::size_t RunLog::Impl::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return i;
  }
  throw std::invalid_argument(prefix(path) + "no column '" + std::string(name) +
                              "' (columns: " + column_list(columns) + ")");
}

void RunLog::Impl::require_writable(const char* action) const {
  if (!writable) fail(std::string("opened read-only, cannot ") + action);
}

void RunLog::Impl::flush() {
  attempt("cannot flush", [&] { file.flush(); });
}

void RunLog::Impl::commit_rows(std::size_t n) {
  attempt("cannot record the row count",
          [&] { hdf5::write_attribute(log_group, kRowsAttribute, static_cast<std::int64_t>(n)); });
  flush();
}

void RunLog::Impl::check_types(const Row& row) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].type == Type::int64 && !row[i].is_integer()) {
      throw std::invalid_argument(prefix(path) + "column '" + columns[i].name +
                                  "' is int64, but the row has a floating-point value for it");
    }
  }
}

// Writes `block` after the complete rows, then counts them: all of them or, after a crash,
// none (the rows' data is flushed before the count that makes it part of the log).
void RunLog::Impl::write_rows(const std::vector<Row>& block) {
  for (const Row& row : block) check_types(row);
  if (block.empty()) return;
  std::vector<std::int64_t> integers(block.size());
  std::vector<double> reals(block.size());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const bool integer = columns[i].type == Type::int64;
    for (std::size_t r = 0; r < block.size(); ++r) {
      if (integer) {
        integers[r] = block[r][i].as_int64();
      } else {
        reals[r] = block[r][i].as_double();
      }
    }
    const void* values = integer ? static_cast<const void*>(integers.data())
                                 : static_cast<const void*>(reals.data());
    try {
      datasets[i].set_length(rows + block.size());
      datasets[i].write(memory_type(columns[i].type), values, rows, block.size());
    } catch (const hdf5::Error& error) {
      undo_extension(i);
      fail("cannot append row " + std::to_string(rows) + " (column '" + columns[i].name +
           "'): " + error.description());
    }
  }
  flush();
  commit_rows(rows + block.size());
  rows += block.size();
}

// Best effort after a failed append: columns 0..last back to the complete rows.
void RunLog::Impl::undo_extension(std::size_t last) noexcept {
  for (std::size_t j = 0; j <= last; ++j) {
    try {
      datasets[j].set_length(rows);
    } catch (const hdf5::Error&) {  // the append's error is the one to report
    }
  }
}

template <class T>
std::vector<T> RunLog::Impl::read_column(std::size_t i, hid_t type) const {
  std::vector<T> values(rows);
  if (rows == 0) return values;
  try {
    datasets[i].read(type, values.data(), 0, rows);
  } catch (const hdf5::Error& error) {
    if (error.is_checksum_mismatch()) {
      fail("damaged (checksum mismatch in /log/" + columns[i].name + ")");
    }
    fail("cannot read /log/" + columns[i].name + ": " + error.description());
  }
  return values;
}

std::string RunLog::Impl::read_meta(const std::string& key) const {
  const std::string where = "/meta/" + key;
  hdf5::Dataset dataset;
  std::optional<hdf5::Datatype> type;
  try {
    dataset = hdf5::Dataset::open(meta_group, key.c_str());
    type = dataset.type();
  } catch (const hdf5::Error&) {
  }
  if (!type || type->type_class() != H5T_STRING) fail("cannot read " + where + " (not a string)");
  if (type->is_variable_string()) {
    char* text = nullptr;
    attempt("cannot read " + where, [&] { dataset.read_all(type->id(), &text); });
    std::string out = text != nullptr ? text : "";
    H5free_memory(text);
    return out;
  }
  if (attempt("cannot read " + where, [&] { return dataset.space().element_count(); }) != 1) {
    fail("cannot read " + where + " (not a single string)");
  }
  std::string out(type->size(), '\0');
  attempt("cannot read " + where, [&] { dataset.read_all(type->id(), out.data()); });
  out.erase(std::find(out.begin(), out.end(), '\0'), out.end());
  return out;
}

void RunLog::Impl::close() {
  if (closed) return;
  closed = true;
  bool ok = true;
  for (hdf5::Dataset& d : datasets) ok = d.close() && ok;
  ok = meta_group.close() && ok;
  ok = log_group.close() && ok;
  ok = file.close() && ok;
  if (!ok) fail("error while closing: " + hdf5::last_error().description());
}

RunLog::RunLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RunLog::RunLog(RunLog&&) noexcept = default;
RunLog& RunLog::operator=(RunLog&&) noexcept = default;

RunLog::~RunLog() {
  if (impl_) {
    try {
      impl_->close();
    } catch (...) {  // a destructor must not throw; close() reports such errors
    }
  }
}

RunLog::Impl& RunLog::impl() const {
  if (!impl_) throw std::logic_error("fiber::rl::RunLog used after being moved from");
  if (impl_->closed) impl_->fail("already closed");
  return *impl_;
}

RunLog RunLog::create(const std::filesystem::path& path, std::vector<Column> columns,
                      IfExists if_exists) {
  if (columns.empty()) throw std::invalid_argument(prefix(path) + "needs at least one column");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    check_name("column", columns[i].name);
    for (std::size_t j = 0; j < i; ++j) {
      if (columns[j].name == columns[i].name) {
        throw std::invalid_argument(prefix(path) + "column '" + columns[i].name +
                                    "' declared twice");
      }
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->writable = true;

  // Never open a FIFO (open(2) would wait for its other end) nor replace a device or a directory.
  if (const std::string_view kind = non_regular_kind(path); !kind.empty()) {
    impl->fail("is " + std::string(kind) + ", not a regular file");
  }
  if (if_exists == IfExists::overwrite) {
    // Never truncate the log of a run that is writing it (it holds HDF5's lock, an flock).
    const int existing = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (existing >= 0) {
      const bool busy = ::flock(existing, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      ::close(existing);  // and our lock with it
      if (busy) impl->fail("in use by another process (the file is locked), not overwritten");
    }
  }
  // The OS creates the file first: its errno explains an existing file or a bad directory best.
  // O_NONBLOCK: a FIFO put there since the check above is refused below, not waited on.
  const int fd = ::open(path.c_str(),
                        O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC |
                            (if_exists == IfExists::overwrite ? O_TRUNC : O_EXCL),
                        0644);
  if (fd < 0) {
    if (errno == EEXIST) {
      impl->fail("already exists (open it to resume, or create it with IfExists::overwrite)");
    }
    impl->fail(std::string("cannot create (") + std::strerror(errno) + ")");
  }
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  if (!regular) {
    impl->fail("is " + std::string(non_regular_kind(st.st_mode)) + ", not a regular file");
  }
  try {
    impl->create_layout(columns);
  } catch (...) {
    impl.reset();  // closes the file
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // ours: created (or truncated) just above
    throw;
  }
  impl->columns = std::move(columns);
  impl->flush();
  return RunLog(std::move(impl));
}

void RunLog::Impl::create_layout(const std::vector<Column>& layout) {
  attempt("cannot create", [&] { file = hdf5::File::create(path); });
  attempt("cannot write the format marker", [&] { hdf5::write_format_marker(file, kMarker); });
  attempt("cannot create groups", [&] {
    log_group = hdf5::Group::create(file, "log", hdf5::LinkOrder::by_creation);
    meta_group = hdf5::Group::create(file, "meta");
  });
  attempt("cannot write the row count",
          [&] { hdf5::write_attribute(log_group, kRowsAttribute, std::int64_t{0}); });
  for (const Column& column : layout) {
    attempt("cannot create column '" + column.name + "'", [&] {
      datasets.push_back(hdf5::Dataset::create_checksummed(log_group, column.name.c_str(),
                                                           file_type(column.type), 0, kChunkRows));
    });
  }
}

void RunLog::Impl::open_columns(std::vector<hsize_t>& lengths) {
  std::vector<std::string> names;
  try {
    names = log_group.link_names(hdf5::LinkOrder::by_creation);
  } catch (const hdf5::Error&) {  // a log written by another tool may not track the order
    names = attempt_damaged("cannot list the columns",
                            [&] { return log_group.link_names(hdf5::LinkOrder::by_name); });
  }
  if (names.empty()) fail("damaged (no columns under /log)");
  for (const std::string& name : names) {
    hdf5::Dataset dataset = attempt_damaged(
        "cannot open /log/" + name, [&] { return hdf5::Dataset::open(log_group, name.c_str()); });
    std::vector<hsize_t> dims;
    H5T_class_t type_class = H5T_NO_CLASS;
    try {
      dims = dataset.space().dimensions();
      type_class = dataset.type().type_class();
    } catch (const hdf5::Error&) {
      dims.clear();
    }
    if (dims.size() != 1) fail("damaged (/log/" + name + " is not a 1-D column)");
    Type column_type{};
    if (type_class == H5T_FLOAT) {
      column_type = Type::float64;
    } else if (type_class == H5T_INTEGER) {
      column_type = Type::int64;
    } else {
      fail("/log/" + name + " is neither a number nor an integer column");
    }
    columns.push_back({name, column_type});
    datasets.push_back(std::move(dataset));
    lengths.push_back(dims[0]);
  }
}

RunLog RunLog::open(const std::filesystem::path& path, Access access) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->writable = access == Access::read_write;
  try {
    // A reader takes no lock: it must neither wait for nor block the run that writes the log.
    impl->file =
        hdf5::File::open(path, impl->writable ? hdf5::Access::read_write : hdf5::Access::read_only,
                         impl->writable ? hdf5::Locking::on : hdf5::Locking::off);
  } catch (const hdf5::Error& error) {
    impl->fail(error.description());
  }
  const std::optional<std::string> marker_problem =
      impl->attempt_damaged("cannot read the root group",
                            [&] { return hdf5::format_marker_problem(impl->file, kMarker); });
  if (marker_problem) impl->fail(*marker_problem);
  impl->attempt_damaged("no readable /log group",
                        [&] { impl->log_group = hdf5::Group::open(impl->file, "log"); });
  impl->attempt_damaged("unreadable /meta group", [&] {
    if (impl->file.contains("meta")) impl->meta_group = hdf5::Group::open(impl->file, "meta");
  });
  std::vector<hsize_t> lengths;
  impl->open_columns(lengths);

  // Complete rows: those every column has and the `rows` attribute counts (a crash between an
  // append's data and its count leaves the row uncounted).
  impl->rows = *std::min_element(lengths.begin(), lengths.end());
  const std::optional<std::int64_t> committed = impl->attempt_damaged("unreadable row count", [&] {
    return hdf5::read_int64_attribute(impl->log_group, Impl::kRowsAttribute);
  });
  if (committed)
    impl->rows = std::min<std::size_t>(impl->rows, std::max<std::int64_t>(*committed, 0));
  if (impl->writable) {
    impl->remove_interrupted_rewrite();
    if (impl->any_column_compressed()) {
      // Appending to compressed chunks is not crash-safe (docs/design.md, "Rollout logs").
      impl->rewrite({}, "decompress");
      return open(path, access);
    }
    impl->recover(lengths, committed);
  }
  return RunLog(std::move(impl));
}

const std::filesystem::path& RunLog::path() const { return impl().path; }
const std::vector<RunLog::Column>& RunLog::columns() const { return impl().columns; }
std::size_t RunLog::rows() const { return impl().rows; }
bool RunLog::writable() const { return impl().writable; }

bool RunLog::has_column(std::string_view name) const {
  const auto& columns = impl().columns;
  return std::any_of(columns.begin(), columns.end(),
                     [&](const Column& c) { return c.name == name; });
}

void RunLog::append(std::initializer_list<Value> row) { append(Row(row)); }

void RunLog::append(const Row& row) {
  Impl& self = impl();
  self.require_writable("append");
  if (row.size() != self.columns.size()) {
    throw std::invalid_argument(prefix(self.path) + "a row needs " +
                                std::to_string(self.columns.size()) + " values (" +
                                column_list(self.columns) + "), got " + std::to_string(row.size()));
  }
  self.write_rows({row});
}

void RunLog::append(const NamedRow& row) {
  Impl& self = impl();
  self.require_writable("append");
  for (const auto& entry : row) self.index_of(entry.first);  // unknown names throw
  Row ordered;
  ordered.reserve(self.columns.size());
  for (const Column& column : self.columns) {
    auto it = row.find(column.name);
    if (it == row.end()) {
      throw std::invalid_argument(prefix(self.path) + "the row has no value for column '" +
                                  column.name + "'");
    }
    ordered.push_back(it->second);
  }
  self.write_rows({ordered});
}

void RunLog::append_rows(const std::vector<Row>& rows) {
  Impl& self = impl();
  self.require_writable("append");
  for (const Row& row : rows) {
    if (row.size() != self.columns.size()) {
      throw std::invalid_argument(
          prefix(self.path) + "a row needs " + std::to_string(self.columns.size()) + " values (" +
          column_list(self.columns) + "), got " + std::to_string(row.size()));
    }
  }
  self.write_rows(rows);
}

void RunLog::truncate(std::size_t rows) {
  Impl& self = impl();
  self.require_writable("truncate");
  if (rows > self.rows) {
    throw std::invalid_argument(prefix(self.path) + "cannot truncate to " + std::to_string(rows) +
                                " rows, it has " + std::to_string(self.rows));
  }
  self.commit_rows(rows);  // the count first: a crash in between leaves `rows` complete rows
  self.rows = rows;
  self.attempt("cannot truncate", [&] {
    for (const hdf5::Dataset& dataset : self.datasets) dataset.set_length(rows);
  });
  self.flush();
}

std::vector<double> RunLog::doubles(std::string_view column) const {
  const Impl& self = impl();
  return self.read_column<double>(self.index_of(column), H5T_NATIVE_DOUBLE);
}

std::vector<std::int64_t> RunLog::int64s(std::string_view column) const {
  const Impl& self = impl();
  const std::size_t i = self.index_of(column);
  if (self.columns[i].type != Type::int64) {
    throw std::invalid_argument(prefix(self.path) + "column '" + self.columns[i].name +
                                "' is float64, not int64 (read it with doubles())");
  }
  return self.read_column<std::int64_t>(i, H5T_NATIVE_INT64);
}

void RunLog::set_meta(std::string_view key, std::string_view value) {
  Impl& self = impl();
  self.require_writable("set metadata");
  check_name("metadata key", key);
  if (value.find('\0') != std::string_view::npos) {
    throw std::invalid_argument(prefix(self.path) + "metadata '" + std::string(key) +
                                "' contains a NUL character");
  }
  if (!self.meta_group) {
    self.attempt("cannot create /meta",
                 [&] { self.meta_group = hdf5::Group::create(self.file, "meta"); });
  }
  const std::string name(key);
  const std::string text(value);
  const char* pointer = text.c_str();
  const hdf5::Datatype type =
      self.attempt("cannot make a string type", [] { return hdf5::Datatype::variable_string(); });
  self.attempt("cannot write /meta/" + name, [&] {
    if (self.meta_group.contains(name.c_str())) {
      hdf5::Dataset old = hdf5::Dataset::open(self.meta_group, name.c_str());
      if (old.type().is_variable_string()) {
        old.write_all(type.id(), &pointer);
        return;
      }
      old.close();
      self.meta_group.remove(name.c_str());
    }
    hdf5::Dataset dataset = hdf5::Dataset::create_scalar(self.meta_group, name.c_str(), type);
    dataset.write_all(type.id(), &pointer);
    dataset.close_or_throw();
  });
  self.flush();
}

std::optional<std::string> RunLog::meta(std::string_view key) const {
  const Impl& self = impl();
  check_name("metadata key", key);
  if (!self.meta_group) return std::nullopt;
  const std::string name(key);
  if (!self.attempt("cannot read /meta/" + name,
                    [&] { return self.meta_group.contains(name.c_str()); })) {
    return std::nullopt;
  }
  return self.read_meta(name);
}

std::map<std::string, std::string> RunLog::meta() const {
  const Impl& self = impl();
  std::map<std::string, std::string> out;
  if (!self.meta_group) return out;
  const std::vector<std::string> names = self.attempt(
      "cannot list /meta", [&] { return self.meta_group.link_names(hdf5::LinkOrder::by_name); });
  for (const std::string& name : names) out.emplace(name, self.read_meta(name));
  return out;
}

void RunLog::flush() { impl().flush(); }

void RunLog::sync() {
  Impl& self = impl();
  self.flush();
  const int descriptor =
      self.attempt("cannot get the file descriptor", [&] { return self.file.descriptor(); });
  if (::fsync(descriptor) != 0) {
    self.fail(std::string("fsync failed (") + std::strerror(errno) + ")");
  }
}

void RunLog::close() {
  if (!impl_) throw std::logic_error("fiber::rl::RunLog used after being moved from");
  impl_->close();
}

}  // namespace fiber::rl
