#include "storage/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

#include "storage/hdf5_support.hpp"

namespace fiber::rl {

namespace {

using detail::CheckpointValue;
using detail::Handle;

constexpr const char* kFormat = "fiber-checkpoint";
constexpr long long kVersion = 1;
constexpr const char* kKindAttribute = "fiber_kind";
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;  // 1 MiB per chunk (and checksum)

struct KindName {
  CheckpointKind kind;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {CheckpointKind::float64, "float64"},      {CheckpointKind::int64, "int64"},
    {CheckpointKind::uint64, "uint64"},        {CheckpointKind::float64_vector, "float64[]"},
    {CheckpointKind::int64_vector, "int64[]"}, {CheckpointKind::uint64_vector, "uint64[]"},
    {CheckpointKind::string, "string"},        {CheckpointKind::bytes, "bytes"},
};

bool parse_kind(std::string_view text, CheckpointKind& kind) {
  for (const KindName& k : kKindNames) {
    if (k.name == text) {
      kind = k.kind;
      return true;
    }
  }
  return false;
}

void check_name(std::string_view name) {
  if (name.empty() || name == "." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    throw std::invalid_argument("checkpoint entry name '" + std::string(name) +
                                "' is invalid (it must be non-empty, not '.', without '/')");
  }
}

std::string prefix(const std::filesystem::path& path) {
  return "checkpoint " + path.string() + ": ";
}

// ---- writing ----------------------------------------------------------------------------------

// How one value is laid out in the file.
struct Layout {
  hid_t file_type = H5I_INVALID_HID;
  hid_t memory_type = H5I_INVALID_HID;
  std::size_t count = 0;         // elements (the dataset's length)
  std::size_t element_size = 1;  // bytes per element
  const void* data = nullptr;
  Handle owned_type;  // for strings: the fixed-length type of this string
};

template <class T>
void set_numeric(Layout& layout, const T* data, std::size_t count) {
  if constexpr (std::is_same_v<T, double>) {
    layout.file_type = H5T_IEEE_F64LE;
    layout.memory_type = H5T_NATIVE_DOUBLE;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    layout.file_type = H5T_STD_I64LE;
    layout.memory_type = H5T_NATIVE_INT64;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    layout.file_type = H5T_STD_U64LE;
    layout.memory_type = H5T_NATIVE_UINT64;
  } else {
    static_assert(std::is_same_v<T, std::byte>);
    layout.file_type = H5T_STD_U8LE;
    layout.memory_type = H5T_NATIVE_UINT8;
  }
  layout.count = count;
  layout.element_size = sizeof(T);
  layout.data = data;
}

Layout layout_of(const CheckpointValue& value) {
  Layout layout;
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          layout.owned_type = detail::string_type(v.size());
          layout.file_type = layout.memory_type = layout.owned_type.get();
          layout.count = v.empty() ? 0 : 1;  // one string of v.size() bytes, or none
          layout.element_size = std::max<std::size_t>(v.size(), 1);
          layout.data = v.data();
        } else if constexpr (std::is_arithmetic_v<V>) {
          set_numeric(layout, &v, 1);
        } else {
          set_numeric(layout, v.data(), v.size());
        }
      },
      value);
  return layout;
}

// Writes one entry; on failure returns false with `problem` set.
bool write_entry(hid_t file, const std::string& name, const CheckpointValue& value,
                 std::string& problem) {
  const Layout layout = layout_of(value);
  if (layout.file_type < 0) {
    problem = "cannot make the type of '" + name + "'";
    return false;
  }
  const hsize_t dims[1] = {layout.count};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  const hsize_t chunk[1] = {std::clamp<hsize_t>(kChunkBytes / layout.element_size, 1,
                                                std::max<hsize_t>(layout.count, 1))};
  Handle space = detail::space_handle(H5Screate_simple(1, dims, max_dims));
  Handle dcpl = detail::plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (!space || !dcpl || H5Pset_chunk(dcpl.get(), 1, chunk) < 0 ||
      H5Pset_fletcher32(dcpl.get()) < 0) {
    problem = "cannot prepare /" + name + " (" + detail::innermost(detail::error_stack(), "") + ")";
    return false;
  }
  Handle dataset = detail::dataset_handle(H5Dcreate2(
      file, name.c_str(), layout.file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!dataset ||
      (layout.count > 0 && H5Dwrite(dataset.get(), layout.memory_type, H5S_ALL, H5S_ALL,
                                    H5P_DEFAULT, layout.data) < 0) ||
      !detail::write_string_attribute(dataset.get(), kKindAttribute,
                                      to_string(detail::kind_of(value))) ||
      !dataset.close()) {
    problem = "cannot write /" + name + " (" +
              detail::innermost(detail::error_stack(), "HDF5 error") + ")";
    return false;
  }
  return true;
}

void fsync_path(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "open " + path.string());
  }
  const int result = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); the rename is then as durable as it gets.
  if (result != 0 && !(directory && (saved == EINVAL || saved == EROFS))) {
    throw std::system_error(saved, std::generic_category(), "fsync " + path.string());
  }
}

// ---- reading ----------------------------------------------------------------------------------

bool type_matches(hid_t type, CheckpointKind kind) {
  const H5T_class_t type_class = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  switch (kind) {
    case CheckpointKind::float64:
    case CheckpointKind::float64_vector:
      return type_class == H5T_FLOAT && size == 8;
    case CheckpointKind::int64:
    case CheckpointKind::int64_vector:
      return type_class == H5T_INTEGER && size == 8 && H5Tget_sign(type) == H5T_SGN_2;
    case CheckpointKind::uint64:
    case CheckpointKind::uint64_vector:
      return type_class == H5T_INTEGER && size == 8 && H5Tget_sign(type) == H5T_SGN_NONE;
    case CheckpointKind::string:
      return type_class == H5T_STRING && H5Tis_variable_str(type) == 0;
    case CheckpointKind::bytes:
      return type_class == H5T_INTEGER && size == 1;
  }
  return false;
}

bool is_scalar(CheckpointKind kind) {
  return kind == CheckpointKind::float64 || kind == CheckpointKind::int64 ||
         kind == CheckpointKind::uint64;
}

class EntryReader {
 public:
  EntryReader(const std::filesystem::path& path, std::uintmax_t file_size)
      : path_(path), file_size_(file_size) {}

  [[noreturn]] void damaged(const std::string& what) const {
    throw CheckpointError(prefix(path_) + "damaged (" + what + ")");
  }

  // Reads `count` elements of the dataset into `out`, or throws naming the problem.
  void read(hid_t dataset, const std::string& name, hid_t memory_type, void* out,
            std::size_t count) const {
    if (count == 0) return;
    if (H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
      const std::vector<std::string> stack = detail::error_stack();
      if (detail::checksum_failure(stack)) damaged("checksum mismatch in /" + name);
      damaged("cannot read /" + name + ": " + detail::innermost(stack, "HDF5 error"));
    }
  }

  template <class T>
  std::vector<T> read_vector(hid_t dataset, const std::string& name, hid_t memory_type,
                             std::size_t count) const {
    check_size(name, count, sizeof(T));
    std::vector<T> values(count);
    read(dataset, name, memory_type, values.data(), count);
    return values;
  }

  // Uncompressed data cannot be larger than the file: a larger size means damaged metadata (and
  // would otherwise make us allocate absurd amounts).
  void check_size(const std::string& name, std::size_t count, std::size_t element_size) const {
    if (element_size != 0 && count > file_size_ / element_size) {
      damaged("/" + name + " claims more data than the file holds");
    }
  }

  CheckpointValue read_entry(hid_t dataset, const std::string& name, CheckpointKind kind) const {
    Handle space = detail::space_handle(H5Dget_space(dataset));
    Handle type = detail::type_handle(H5Dget_type(dataset));
    if (!space || !type) {
      damaged("cannot read the shape of /" + name + ": " +
              detail::innermost(detail::error_stack(), "HDF5 error"));
    }
    hsize_t dims[1] = {0};
    if (H5Sget_simple_extent_ndims(space.get()) != 1 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1 ||
        !type_matches(type.get(), kind) || (is_scalar(kind) && dims[0] != 1) ||
        (kind == CheckpointKind::string && dims[0] > 1)) {
      damaged("/" + name + " does not have the type and shape of a " +
              std::string(to_string(kind)) + " entry");
    }
    const auto count = static_cast<std::size_t>(dims[0]);
    switch (kind) {
      case CheckpointKind::float64:
        return read_vector<double>(dataset, name, H5T_NATIVE_DOUBLE, 1)[0];
      case CheckpointKind::int64:
        return read_vector<std::int64_t>(dataset, name, H5T_NATIVE_INT64, 1)[0];
      case CheckpointKind::uint64:
        return read_vector<std::uint64_t>(dataset, name, H5T_NATIVE_UINT64, 1)[0];
      case CheckpointKind::float64_vector:
        return read_vector<double>(dataset, name, H5T_NATIVE_DOUBLE, count);
      case CheckpointKind::int64_vector:
        return read_vector<std::int64_t>(dataset, name, H5T_NATIVE_INT64, count);
      case CheckpointKind::uint64_vector:
        return read_vector<std::uint64_t>(dataset, name, H5T_NATIVE_UINT64, count);
      case CheckpointKind::bytes: {
        Bytes bytes = read_vector<std::byte>(dataset, name, H5T_NATIVE_UINT8, count);
        return bytes;
      }
      case CheckpointKind::string: {
        if (count == 0) return std::string();
        const std::size_t length = H5Tget_size(type.get());
        check_size(name, 1, length);
        std::string text(length, '\0');
        read(dataset, name, type.get(), text.data(), 1);  // the file's own type: no conversion
        return text;
      }
    }
    damaged("/" + name + " has an unknown kind");
  }

 private:
  const std::filesystem::path& path_;
  std::uintmax_t file_size_;
};

}  // namespace

std::string_view to_string(CheckpointKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

namespace detail {
CheckpointKind kind_of(const CheckpointValue& value) {
  constexpr CheckpointKind kinds[] = {
      CheckpointKind::float64,        CheckpointKind::int64,        CheckpointKind::uint64,
      CheckpointKind::float64_vector, CheckpointKind::int64_vector, CheckpointKind::uint64_vector,
      CheckpointKind::string,         CheckpointKind::bytes,
  };
  static_assert(std::size(kinds) == std::variant_size_v<CheckpointValue>);
  return kinds[value.index()];
}
}  // namespace detail

// ---- CheckpointWriter -------------------------------------------------------------------------

void CheckpointWriter::put(std::string_view name, double value) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), value);
}
void CheckpointWriter::put(std::string_view name, std::int64_t value) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), value);
}
void CheckpointWriter::put(std::string_view name, std::uint64_t value) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), value);
}
void CheckpointWriter::put(std::string_view name, std::vector<double> values) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), std::move(values));
}
void CheckpointWriter::put(std::string_view name, std::vector<std::int64_t> values) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), std::move(values));
}
void CheckpointWriter::put(std::string_view name, std::vector<std::uint64_t> values) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), std::move(values));
}
void CheckpointWriter::put(std::string_view name, std::string text) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), std::move(text));
}
void CheckpointWriter::put(std::string_view name, Bytes bytes) {
  check_name(name);
  entries_.insert_or_assign(std::string(name), std::move(bytes));
}
void CheckpointWriter::put_bytes(std::string_view name, const void* data, std::size_t size) {
  const auto* begin = static_cast<const std::byte*>(data);
  put(name, Bytes(begin, begin + size));
}

bool CheckpointWriter::has(std::string_view name) const { return entries_.contains(name); }

void CheckpointWriter::erase(std::string_view name) {
  if (auto it = entries_.find(name); it != entries_.end()) entries_.erase(it);
}

void CheckpointWriter::commit(const std::filesystem::path& path) const {
  detail::silence_hdf5();
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  bool created = false;
  auto fail = [&](const std::string& what) {
    if (created) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
    }
    throw CheckpointError(prefix(path) + "cannot write (" + what + ")");
  };

  // Create (or truncate a stale) temporary file through the OS first: its errno is the clearest
  // explanation of an unwritable directory.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(temporary.string() + ": " + std::strerror(errno));
  ::close(fd);
  created = true;

  std::string problem;
  {
    Handle fapl = detail::file_access_properties();
    Handle file =
        detail::file_handle(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file) {
      fail(temporary.string() + ": " + detail::innermost(detail::error_stack(), "HDF5 error"));
    }
    if (!detail::write_string_attribute(file.get(), "format", kFormat) ||
        !detail::write_int64_attribute(file.get(), "version", kVersion)) {
      fail("cannot write the format marker: " +
           detail::innermost(detail::error_stack(), "HDF5 error"));
    }
    for (const auto& [name, value] : entries_) {
      if (!write_entry(file.get(), name, value, problem)) fail(problem);
    }
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0 || !file.close()) {
      fail("cannot flush " + temporary.string() + ": " +
           detail::innermost(detail::error_stack(), "HDF5 error"));
    }
  }
  try {
    fsync_path(temporary, false);
  } catch (const std::system_error& e) {
    fail(e.what());
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    fail("rename " + temporary.string() + " -> " + path.string() + ": " + std::strerror(errno));
  }
  created = false;  // it is the checkpoint now
  try {
    const std::filesystem::path directory = path.parent_path();
    fsync_path(directory.empty() ? std::filesystem::path(".") : directory, true);
  } catch (const std::system_error& e) {
    fail(std::string("the checkpoint was renamed into place but ") + e.what());
  }
}

// ---- CheckpointReader -------------------------------------------------------------------------

CheckpointReader::CheckpointReader(const std::filesystem::path& path) : path_(path) {
  detail::silence_hdf5();
  std::string problem;
  Handle file = detail::open_file(path, false, problem);
  if (!file) throw CheckpointError(prefix(path) + problem);

  std::error_code size_error;
  const std::uintmax_t file_size = std::filesystem::file_size(path, size_error);
  const EntryReader reader(path_,
                           size_error ? std::numeric_limits<std::uintmax_t>::max() : file_size);

  const htri_t has_format = H5Aexists(file.get(), "format");
  if (has_format < 0) {
    reader.damaged("cannot read the root group: " +
                   detail::innermost(detail::error_stack(), "HDF5 error"));
  }
  std::string format;
  if (has_format == 0 || !detail::read_string_attribute(file.get(), "format", format)) {
    throw CheckpointError(prefix(path) +
                          "not a fiber checkpoint (an HDF5 file without the 'format' marker)");
  }
  if (format != kFormat) {
    throw CheckpointError(prefix(path) + "not a fiber checkpoint (its format is '" + format +
                          "', not '" + kFormat + "')");
  }
  long long version = 0;
  if (!detail::read_int64_attribute(file.get(), "version", version)) {
    reader.damaged("no readable 'version' attribute");
  }
  if (version != kVersion) {
    throw CheckpointError(prefix(path) + "unsupported checkpoint version " +
                          std::to_string(version) + " (this program reads version " +
                          std::to_string(kVersion) + ")");
  }

  std::vector<std::string> names;
  if (!detail::link_names(file.get(), false, names)) {
    reader.damaged("cannot list the entries: " +
                   detail::innermost(detail::error_stack(), "HDF5 error"));
  }
  for (const std::string& name : names) {
    Handle object = detail::object_handle(H5Oopen(file.get(), name.c_str(), H5P_DEFAULT));
    if (!object) {
      reader.damaged("cannot open /" + name + ": " +
                     detail::innermost(detail::error_stack(), "HDF5 error"));
    }
    if (H5Iget_type(object.get()) != H5I_DATASET) continue;  // not one of ours: ignored
    const htri_t has_kind = H5Aexists(object.get(), kKindAttribute);
    if (has_kind < 0) {
      reader.damaged("cannot read the attributes of /" + name + ": " +
                     detail::innermost(detail::error_stack(), "HDF5 error"));
    }
    if (has_kind == 0) continue;  // a dataset someone else added: ignored
    std::string kind_text;
    CheckpointKind kind{};
    if (!detail::read_string_attribute(object.get(), kKindAttribute, kind_text)) {
      reader.damaged("unreadable 'fiber_kind' of /" + name);
    }
    if (!parse_kind(kind_text, kind)) {
      throw CheckpointError(prefix(path) + "entry /" + name + " has the unknown kind '" +
                            kind_text + "' (written by a newer program?)");
    }
    entries_.emplace(name, reader.read_entry(object.get(), name, kind));
  }
  if (!file.close()) {
    reader.damaged("cannot close: " + detail::innermost(detail::error_stack(), "HDF5 error"));
  }
}

bool CheckpointReader::has(std::string_view name) const { return entries_.contains(name); }

std::vector<std::string> CheckpointReader::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& entry : entries_) out.push_back(entry.first);
  return out;
}

const CheckpointValue& CheckpointReader::entry(std::string_view name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    throw CheckpointError(prefix(path_) + "no entry '" + std::string(name) + "'");
  }
  return it->second;
}

CheckpointKind CheckpointReader::kind(std::string_view name) const {
  return detail::kind_of(entry(name));
}

void CheckpointReader::wrong_kind(std::string_view name, CheckpointKind wanted) const {
  throw CheckpointError(prefix(path_) + "entry '" + std::string(name) + "' is " +
                        std::string(to_string(kind(name))) + ", not " +
                        std::string(to_string(wanted)));
}

double CheckpointReader::float64(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<double>(&value)) return *v;
  wrong_kind(name, CheckpointKind::float64);
}

std::int64_t CheckpointReader::int64(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<std::int64_t>(&value)) return *v;
  if (const auto* u = std::get_if<std::uint64_t>(&value);
      u != nullptr && std::in_range<std::int64_t>(*u)) {
    return static_cast<std::int64_t>(*u);
  }
  wrong_kind(name, CheckpointKind::int64);
}

std::uint64_t CheckpointReader::uint64(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<std::uint64_t>(&value)) return *v;
  if (const auto* i = std::get_if<std::int64_t>(&value); i != nullptr && *i >= 0) {
    return static_cast<std::uint64_t>(*i);
  }
  wrong_kind(name, CheckpointKind::uint64);
}

const std::vector<double>& CheckpointReader::vector(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<std::vector<double>>(&value)) return *v;
  wrong_kind(name, CheckpointKind::float64_vector);
}

const std::vector<std::int64_t>& CheckpointReader::int64_vector(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&value)) return *v;
  wrong_kind(name, CheckpointKind::int64_vector);
}

const std::vector<std::uint64_t>& CheckpointReader::uint64_vector(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<std::vector<std::uint64_t>>(&value)) return *v;
  wrong_kind(name, CheckpointKind::uint64_vector);
}

const std::string& CheckpointReader::string(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<std::string>(&value)) return *v;
  wrong_kind(name, CheckpointKind::string);
}

const Bytes& CheckpointReader::bytes(std::string_view name) const {
  const CheckpointValue& value = entry(name);
  if (const auto* v = std::get_if<Bytes>(&value)) return *v;
  wrong_kind(name, CheckpointKind::bytes);
}

}  // namespace fiber::rl
