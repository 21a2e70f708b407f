#include "storage/run_log.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "storage/hdf5_support.hpp"

namespace fiber::rl {

namespace {

using detail::Handle;

constexpr const char* kFormat = "fiber-runlog";
constexpr long long kVersion = 1;
constexpr hsize_t kChunkRows = 1024;       // 8 KiB per chunk (and checksum) for a float64 column
constexpr std::size_t kValueBytes = 8;     // int64 and float64 alike
constexpr std::size_t kChecksumBytes = 4;  // Fletcher32, after each chunk's data

std::string prefix(const std::filesystem::path& path) { return "run log " + path.string() + ": "; }

void check_name(std::string_view what, std::string_view name) {
  if (name.empty() || name == "." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    throw std::invalid_argument("run log " + std::string(what) + " name '" + std::string(name) +
                                "' is invalid (it must be non-empty, not '.', without '/')");
  }
}

hid_t memory_type(RunLog::Type type) {
  return type == RunLog::Type::int64 ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
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

std::string hdf5_reason() { return detail::innermost(detail::error_stack(), "HDF5 error"); }

Handle group_with_creation_order(hid_t parent, const char* name) {
  Handle gcpl = detail::plist_handle(H5Pcreate(H5P_GROUP_CREATE));
  if (!gcpl ||
      H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
    return {};
  }
  return detail::group_handle(H5Gcreate2(parent, name, H5P_DEFAULT, gcpl.get(), H5P_DEFAULT));
}

}  // namespace

struct RunLog::Impl {
  std::filesystem::path path;
  bool writable = false;
  bool closed = false;
  Handle file;
  Handle log_group;
  Handle meta_group;  // may be invalid in a read-only log without /meta
  std::vector<Column> columns;
  std::vector<Handle> datasets;  // one per column
  std::size_t rows = 0;

  [[noreturn]] void fail(const std::string& what) const { throw RunLogError(prefix(path) + what); }

  std::size_t index_of(std::string_view name) const {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].name == name) return i;
    }
    throw std::invalid_argument(prefix(path) + "no column '" + std::string(name) +
                                "' (columns: " + column_list(columns) + ")");
  }

  void require_writable(const char* action) const {
    if (!writable) fail(std::string("opened read-only, cannot ") + action);
  }

  void flush() {
    if (H5Fflush(file.get(), H5F_SCOPE_LOCAL) < 0) fail("cannot flush: " + hdf5_reason());
  }

  bool set_extent(std::size_t i, std::size_t n) {
    const hsize_t size[1] = {n};
    return H5Dset_extent(datasets[i].get(), size) >= 0;
  }

  // Reads (write = false) or writes `count` values of column i from row `first` on, through
  // the transfer properties `dxpl`. On failure returns HDF5's error stack.
  std::optional<std::vector<std::string>> transfer(std::size_t i, hid_t type, void* data,
                                                   hsize_t first, hsize_t count, bool write,
                                                   hid_t dxpl = H5P_DEFAULT) const {
    const hsize_t start[1] = {first};
    const hsize_t n[1] = {count};
    Handle file_space = detail::space_handle(H5Dget_space(datasets[i].get()));
    Handle memory_space = detail::space_handle(H5Screate_simple(1, n, nullptr));
    const bool ok =
        file_space && memory_space &&
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, n, nullptr) >= 0 &&
        (write ? H5Dwrite(datasets[i].get(), type, memory_space.get(), file_space.get(), dxpl, data)
               : H5Dread(datasets[i].get(), type, memory_space.get(), file_space.get(), dxpl,
                         data)) >= 0;
    if (ok) return std::nullopt;
    return detail::error_stack();  // taken before the handles above close (which clears it)
  }

  // Records that the first n rows are complete: the `rows` attribute of /log, written after the
  // rows' data has been flushed. A crash before it leaves the row uncounted (and dropped).
  void commit_rows(std::size_t n) {
    const long long value = static_cast<long long>(n);
    Handle attribute = detail::attribute_handle(H5Aopen(log_group.get(), "rows", H5P_DEFAULT));
    if (!attribute || H5Awrite(attribute.get(), H5T_NATIVE_LLONG, &value) < 0) {
      fail("cannot record the row count: " + hdf5_reason());
    }
    attribute.close();
    flush();
  }

  void write_row(const Row& row) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].type == Type::int64 && !row[i].is_integer()) {
        throw std::invalid_argument(prefix(path) + "column '" + columns[i].name +
                                    "' is int64, but the row has a floating-point value for it");
      }
    }
    for (std::size_t i = 0; i < columns.size(); ++i) {
      std::int64_t integer = row[i].as_int64();
      double real = row[i].as_double();
      void* value =
          columns[i].type == Type::int64 ? static_cast<void*>(&integer) : static_cast<void*>(&real);
      std::optional<std::vector<std::string>> error;
      if (!set_extent(i, rows + 1)) {
        error = detail::error_stack();
      } else {
        error = transfer(i, memory_type(columns[i].type), value, rows, 1, true);
      }
      if (error) {
        for (std::size_t j = 0; j <= i; ++j) set_extent(j, rows);  // best effort: undo
        fail("cannot append row " + std::to_string(rows) + " (column '" + columns[i].name +
             "'): " + detail::innermost(*error, "HDF5 error"));
      }
    }
    flush();                // the row's data first,
    commit_rows(rows + 1);  // then the count that makes it part of the log
    ++rows;
  }

  template <class T>
  std::vector<T> read_column(std::size_t i, hid_t type) const {
    std::vector<T> values(rows);
    if (rows == 0) return values;
    if (auto error = transfer(i, type, values.data(), 0, rows, false)) {
      if (detail::checksum_failure(*error)) {
        fail("damaged (checksum mismatch in /log/" + columns[i].name + ")");
      }
      fail("cannot read /log/" + columns[i].name + ": " + detail::innermost(*error, "HDF5 error"));
    }
    return values;
  }

  // Checks the chunks of column i that hold complete rows, before anything is written. A chunk
  // whose checksum fails is refused as corrupted unless a crash in the middle of an append
  // explains it: the complete rows are intact and the stored checksum is still that of the chunk
  // before the torn write (its complete rows, then the fill value, zeros).
  void verify_complete_rows(std::size_t i) const {
    const std::size_t chunks = (rows + kChunkRows - 1) / kChunkRows;
    std::vector<unsigned char> chunk;
    for (std::size_t c = 0; c < chunks; ++c) {
      const hsize_t offset[1] = {c * kChunkRows};
      hsize_t stored_size = 0;
      std::uint32_t filters = 0;
      if (H5Dget_chunk_storage_size(datasets[i].get(), offset, &stored_size) < 0 ||
          stored_size != kChunkRows * kValueBytes + kChecksumBytes) {
        fail("damaged (/log/" + columns[i].name + " has a chunk of an unexpected size)");
      }
      chunk.resize(stored_size);
      if (H5Dread_chunk(datasets[i].get(), H5P_DEFAULT, offset, &filters, chunk.data()) < 0) {
        fail("cannot read /log/" + columns[i].name + ": " + hdf5_reason());
      }
      const std::size_t data_bytes = stored_size - kChecksumBytes;
      const std::uint32_t stored = detail::little_endian_uint32(chunk.data() + data_bytes);
      if (detail::matches_fletcher32(chunk.data(), data_bytes, stored)) continue;
      const std::size_t complete = std::min<std::size_t>(rows - c * kChunkRows, kChunkRows);
      std::fill(chunk.begin() + static_cast<std::ptrdiff_t>(complete * kValueBytes),
                chunk.begin() + static_cast<std::ptrdiff_t>(data_bytes), 0);
      if (detail::matches_fletcher32(chunk.data(), data_bytes, stored)) continue;  // torn
      fail("damaged (checksum mismatch in /log/" + columns[i].name + ", rows " +
           std::to_string(c * kChunkRows) + "-" + std::to_string(c * kChunkRows + complete - 1) +
           "; refused, nothing was changed: restore the file from a copy, or start a new run)");
    }
  }

  // After a crash in the middle of an append, the chunk holding the last rows may have been
  // written only in part: its complete rows are intact but its checksum no longer matches
  // (verify_complete_rows() made sure that is all). Where the checksum fails, reads the rows
  // again without checking and writes them back (new checksums).
  void repair_torn_chunks() {
    if (rows == 0) return;
    std::vector<std::uint64_t> buffer(rows);  // 8 bytes per value, whatever the column type
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const hid_t type = memory_type(columns[i].type);
      auto error = transfer(i, type, buffer.data(), 0, rows, false);
      if (!error) continue;
      if (!detail::checksum_failure(*error)) {
        fail("cannot read /log/" + columns[i].name + ": " +
             detail::innermost(*error, "HDF5 error"));
      }
      Handle unchecked = detail::plist_handle(H5Pcreate(H5P_DATASET_XFER));
      if (!unchecked || H5Pset_edc_check(unchecked.get(), H5Z_DISABLE_EDC) < 0 ||
          transfer(i, type, buffer.data(), 0, rows, false, unchecked.get()) ||
          transfer(i, type, buffer.data(), 0, rows, true)) {
        fail("damaged (cannot repair /log/" + columns[i].name + ")");
      }
      flush();
      if (transfer(i, type, buffer.data(), 0, rows, false)) {
        fail("damaged (checksum mismatch in /log/" + columns[i].name + ")");
      }
    }
  }

  std::string read_meta(const std::string& key) const {
    Handle dataset = detail::dataset_handle(H5Dopen2(meta_group.get(), key.c_str(), H5P_DEFAULT));
    Handle type = dataset ? detail::type_handle(H5Dget_type(dataset.get())) : Handle{};
    if (!type || H5Tget_class(type.get()) != H5T_STRING) {
      fail("cannot read /meta/" + key + " (not a string)");
    }
    if (H5Tis_variable_str(type.get()) > 0) {
      char* text = nullptr;
      if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0) {
        fail("cannot read /meta/" + key + ": " + hdf5_reason());
      }
      std::string out = text != nullptr ? text : "";
      H5free_memory(text);
      return out;
    }
    Handle space = detail::space_handle(H5Dget_space(dataset.get()));
    if (!space || H5Sget_simple_extent_npoints(space.get()) != 1) {
      fail("cannot read /meta/" + key + " (not a single string)");
    }
    std::string out(H5Tget_size(type.get()), '\0');
    if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
      fail("cannot read /meta/" + key + ": " + hdf5_reason());
    }
    out.erase(std::find(out.begin(), out.end(), '\0'), out.end());
    return out;
  }

  // The groups, attributes and (empty) columns of a new log, in the new file `path`.
  void create_layout(const std::vector<Column>& layout);

  void close() {
    if (closed) return;
    closed = true;
    bool ok = true;
    for (Handle& d : datasets) ok = d.close() && ok;
    ok = meta_group.close() && ok;
    ok = log_group.close() && ok;
    ok = file.close() && ok;
    if (!ok) fail("error while closing: " + hdf5_reason());
  }
};

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
  detail::silence_hdf5();
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

  if (if_exists == IfExists::overwrite) {
    // Never truncate the log of a run that is writing it (it holds HDF5's lock, an flock).
    const int existing = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (existing >= 0) {
      const bool busy = ::flock(existing, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      ::close(existing);  // and our lock with it
      if (busy) impl->fail("in use by another process (the file is locked), not overwritten");
    }
  }
  // The OS creates the file first: its errno explains an existing file or a bad directory best.
  const int fd = ::open(
      path.c_str(),
      O_WRONLY | O_CREAT | O_CLOEXEC | (if_exists == IfExists::overwrite ? O_TRUNC : O_EXCL), 0644);
  if (fd < 0) {
    if (errno == EEXIST) {
      impl->fail("already exists (open it to resume, or create it with IfExists::overwrite)");
    }
    impl->fail(std::string("cannot create (") + std::strerror(errno) + ")");
  }
  ::close(fd);
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
  Handle fapl = detail::file_access_properties();
  file = detail::file_handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!file) fail("cannot create: " + hdf5_reason());
  if (!detail::write_string_attribute(file.get(), "format", kFormat) ||
      !detail::write_int64_attribute(file.get(), "version", kVersion)) {
    fail("cannot write the format marker: " + hdf5_reason());
  }
  log_group = group_with_creation_order(file.get(), "log");
  meta_group =
      detail::group_handle(H5Gcreate2(file.get(), "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!log_group || !meta_group) fail("cannot create groups: " + hdf5_reason());
  if (!detail::write_int64_attribute(log_group.get(), "rows", 0)) {
    fail("cannot write the row count: " + hdf5_reason());
  }

  for (const Column& column : layout) {
    const hsize_t dims[1] = {0};
    const hsize_t max_dims[1] = {H5S_UNLIMITED};
    const hsize_t chunk[1] = {kChunkRows};
    Handle space = detail::space_handle(H5Screate_simple(1, dims, max_dims));
    Handle dcpl = detail::plist_handle(H5Pcreate(H5P_DATASET_CREATE));
    if (!space || !dcpl || H5Pset_chunk(dcpl.get(), 1, chunk) < 0 ||
        H5Pset_fletcher32(dcpl.get()) < 0) {
      fail("cannot prepare column '" + column.name + "': " + hdf5_reason());
    }
    Handle dataset = detail::dataset_handle(H5Dcreate2(log_group.get(), column.name.c_str(),
                                                       file_type(column.type), space.get(),
                                                       H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    if (!dataset) fail("cannot create column '" + column.name + "': " + hdf5_reason());
    datasets.push_back(std::move(dataset));
  }
}

RunLog RunLog::open(const std::filesystem::path& path, Access access) {
  detail::silence_hdf5();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->writable = access == Access::read_write;
  std::string problem;
  // A reader takes no lock: it must neither wait for nor block the run that writes the log.
  impl->file = detail::open_file(path, impl->writable, problem, impl->writable);
  if (!impl->file) impl->fail(problem);

  std::string format;
  if (!detail::read_string_attribute(impl->file.get(), "format", format)) {
    impl->fail("not a fiber run log (an HDF5 file without the 'format' marker)");
  }
  if (format != kFormat) {
    impl->fail("not a fiber run log (its format is '" + format + "', not '" + kFormat + "')");
  }
  long long version = 0;
  if (!detail::read_int64_attribute(impl->file.get(), "version", version) || version != kVersion) {
    impl->fail("unsupported run log version " + std::to_string(version) +
               " (this program reads version " + std::to_string(kVersion) + ")");
  }
  impl->log_group = detail::group_handle(H5Gopen2(impl->file.get(), "log", H5P_DEFAULT));
  if (!impl->log_group) impl->fail("damaged (no readable /log group: " + hdf5_reason() + ")");
  if (H5Lexists(impl->file.get(), "meta", H5P_DEFAULT) > 0) {
    impl->meta_group = detail::group_handle(H5Gopen2(impl->file.get(), "meta", H5P_DEFAULT));
    if (!impl->meta_group) impl->fail("damaged (unreadable /meta group: " + hdf5_reason() + ")");
  }

  std::vector<std::string> names;
  if (!detail::link_names(impl->log_group.get(), true, names) &&
      !detail::link_names(impl->log_group.get(), false, names)) {
    impl->fail("damaged (cannot list the columns: " + hdf5_reason() + ")");
  }
  if (names.empty()) impl->fail("damaged (no columns under /log)");
  std::vector<hsize_t> lengths;
  for (const std::string& name : names) {
    Handle dataset =
        detail::dataset_handle(H5Dopen2(impl->log_group.get(), name.c_str(), H5P_DEFAULT));
    if (!dataset) impl->fail("damaged (cannot open /log/" + name + ": " + hdf5_reason() + ")");
    Handle type = detail::type_handle(H5Dget_type(dataset.get()));
    Handle space = detail::space_handle(H5Dget_space(dataset.get()));
    hsize_t dims[1] = {0};
    if (!type || !space || H5Sget_simple_extent_ndims(space.get()) != 1 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1) {
      impl->fail("damaged (/log/" + name + " is not a 1-D column)");
    }
    Type column_type{};
    if (H5Tget_class(type.get()) == H5T_FLOAT) {
      column_type = Type::float64;
    } else if (H5Tget_class(type.get()) == H5T_INTEGER) {
      column_type = Type::int64;
    } else {
      impl->fail("/log/" + name + " is neither a number nor an integer column");
    }
    impl->columns.push_back({name, column_type});
    impl->datasets.push_back(std::move(dataset));
    lengths.push_back(dims[0]);
  }
  // Complete rows: those every column has and the `rows` attribute counts (a crash between an
  // append's data and its count leaves the row uncounted).
  impl->rows = *std::min_element(lengths.begin(), lengths.end());
  long long committed = 0;
  const bool counted = detail::read_int64_attribute(impl->log_group.get(), "rows", committed);
  if (counted) impl->rows = std::min<std::size_t>(impl->rows, std::max(committed, 0LL));
  if (impl->writable) {
    for (std::size_t i = 0; i < impl->columns.size(); ++i) impl->verify_complete_rows(i);
    // Cut every column back to the complete rows, and repair a chunk torn by a crash.
    for (std::size_t i = 0; i < impl->columns.size(); ++i) {
      if (lengths[i] != impl->rows && !impl->set_extent(i, impl->rows)) {
        impl->fail("cannot cut the columns back to " + std::to_string(impl->rows) +
                   " complete rows: " + hdf5_reason());
      }
    }
    if (!counted) {
      if (!detail::write_int64_attribute(impl->log_group.get(), "rows", 0)) {
        impl->fail("cannot write the row count: " + hdf5_reason());
      }
    }
    impl->flush();
    impl->repair_torn_chunks();
    if (!counted || committed != static_cast<long long>(impl->rows)) impl->commit_rows(impl->rows);
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
  self.write_row(row);
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
  self.write_row(ordered);
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
  for (std::size_t i = 0; i < self.columns.size(); ++i) {
    if (!self.set_extent(i, rows)) self.fail("cannot truncate: " + hdf5_reason());
  }
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
    self.meta_group = detail::group_handle(
        H5Gcreate2(self.file.get(), "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!self.meta_group) self.fail("cannot create /meta: " + hdf5_reason());
  }
  const std::string name(key);
  const std::string text(value);
  const char* pointer = text.c_str();
  Handle type = detail::type_handle(H5Tcopy(H5T_C_S1));
  if (!type || H5Tset_size(type.get(), H5T_VARIABLE) < 0 ||
      H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    self.fail("cannot make a string type: " + hdf5_reason());
  }
  const htri_t exists = H5Lexists(self.meta_group.get(), name.c_str(), H5P_DEFAULT);
  if (exists > 0) {
    Handle old = detail::dataset_handle(H5Dopen2(self.meta_group.get(), name.c_str(), H5P_DEFAULT));
    Handle old_type = old ? detail::type_handle(H5Dget_type(old.get())) : Handle{};
    const bool reusable = old_type && H5Tis_variable_str(old_type.get()) > 0;
    if (reusable) {
      if (H5Dwrite(old.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &pointer) < 0) {
        self.fail("cannot write /meta/" + name + ": " + hdf5_reason());
      }
      self.flush();
      return;
    }
    old.close();
    if (H5Ldelete(self.meta_group.get(), name.c_str(), H5P_DEFAULT) < 0) {
      self.fail("cannot replace /meta/" + name + ": " + hdf5_reason());
    }
  }
  Handle space = detail::space_handle(H5Screate(H5S_SCALAR));
  Handle dataset =
      detail::dataset_handle(H5Dcreate2(self.meta_group.get(), name.c_str(), type.get(),
                                        space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!dataset ||
      H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &pointer) < 0) {
    self.fail("cannot write /meta/" + name + ": " + hdf5_reason());
  }
  dataset.close();
  self.flush();
}

std::optional<std::string> RunLog::meta(std::string_view key) const {
  const Impl& self = impl();
  check_name("metadata key", key);
  if (!self.meta_group) return std::nullopt;
  const std::string name(key);
  if (H5Lexists(self.meta_group.get(), name.c_str(), H5P_DEFAULT) <= 0) return std::nullopt;
  return self.read_meta(name);
}

std::map<std::string, std::string> RunLog::meta() const {
  const Impl& self = impl();
  std::map<std::string, std::string> out;
  if (!self.meta_group) return out;
  std::vector<std::string> names;
  if (!detail::link_names(self.meta_group.get(), false, names)) {
    self.fail("cannot list /meta: " + hdf5_reason());
  }
  for (const std::string& name : names) out.emplace(name, self.read_meta(name));
  return out;
}

void RunLog::flush() { impl().flush(); }

void RunLog::sync() {
  Impl& self = impl();
  self.flush();
  void* handle = nullptr;
  if (H5Fget_vfd_handle(self.file.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) {
    self.fail("cannot get the file descriptor: " + hdf5_reason());
  }
  if (::fsync(*static_cast<int*>(handle)) != 0) {
    self.fail(std::string("fsync failed (") + std::strerror(errno) + ")");
  }
}

void RunLog::close() {
  if (!impl_) throw std::logic_error("fiber::rl::RunLog used after being moved from");
  impl_->close();
}

}  // namespace fiber::rl
