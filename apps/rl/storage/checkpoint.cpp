#include "storage/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

#include "storage/atomic_replace.hpp"
#include "storage/file_kind.hpp"
#include "storage/hdf5/attribute.hpp"
#include "storage/hdf5/dataset.hpp"
#include "storage/hdf5/error.hpp"
#include "storage/hdf5/file.hpp"
#include "storage/hdf5/format_marker.hpp"
#include "storage/hdf5/names.hpp"

namespace fiber::rl {

namespace {

using detail::CheckpointValue;

constexpr hdf5::FormatMarker kMarker{"fiber-checkpoint", 1, "checkpoint"};
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

void check_name(std::string_view name) { hdf5::check_name("checkpoint entry", name); }

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
  std::optional<hdf5::Datatype> string_type;  // for strings: the fixed-length type of this one
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
          layout.string_type = hdf5::Datatype::fixed_string(v.size());
          layout.file_type = layout.memory_type = layout.string_type->id();
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

void write_entry(const hdf5::File& file, const std::string& name, const CheckpointValue& value) {
  const Layout layout = layout_of(value);
  const hsize_t chunk_length =
      std::clamp<hsize_t>(kChunkBytes / layout.element_size, 1, std::max<hsize_t>(layout.count, 1));
  hdf5::Dataset dataset = hdf5::Dataset::create_checksummed(file, name.c_str(), layout.file_type,
                                                            layout.count, chunk_length);
  if (layout.count > 0) dataset.write_all(layout.memory_type, layout.data);
  hdf5::write_attribute(dataset, kKindAttribute, to_string(detail::kind_of(value)));
  dataset.close_or_throw();
}

// ---- reading ----------------------------------------------------------------------------------

bool type_matches(const hdf5::Datatype& type, CheckpointKind kind) {
  const H5T_class_t type_class = type.type_class();
  const std::size_t size = type.size();
  switch (kind) {
    case CheckpointKind::float64:
    case CheckpointKind::float64_vector:
      return type_class == H5T_FLOAT && size == 8;
    case CheckpointKind::int64:
    case CheckpointKind::int64_vector:
      return type_class == H5T_INTEGER && size == 8 && type.is_signed();
    case CheckpointKind::uint64:
    case CheckpointKind::uint64_vector:
      return type_class == H5T_INTEGER && size == 8 && !type.is_signed();
    case CheckpointKind::string:
      return type.is_fixed_string();
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
  void read(const hdf5::Dataset& dataset, const std::string& name, hid_t memory_type, void* out,
            std::size_t count) const {
    if (count == 0) return;
    try {
      dataset.read_all(memory_type, out);
    } catch (const hdf5::Error& error) {
      if (error.is_checksum_mismatch()) damaged("checksum mismatch in /" + name);
      damaged("cannot read /" + name + ": " + error.description());
    }
  }

  template <class T>
  std::vector<T> read_vector(const hdf5::Dataset& dataset, const std::string& name,
                             hid_t memory_type, std::size_t count) const {
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

  CheckpointValue read_entry(const hdf5::Dataset& dataset, const std::string& name,
                             CheckpointKind kind) const {
    std::optional<hdf5::Datatype> type;
    std::vector<hsize_t> dims;
    try {
      type = dataset.type();
      dims = dataset.space().dimensions();
    } catch (const hdf5::Error& error) {
      damaged("cannot read the shape of /" + name + ": " + error.description());
    }
    if (dims.size() != 1 || !type_matches(*type, kind) || (is_scalar(kind) && dims[0] != 1) ||
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
        const std::size_t length = type->size();
        check_size(name, 1, length);
        std::string text(length, '\0');
        read(dataset, name, type->id(), text.data(), 1);  // the file's own type: no conversion
        return text;
      }
    }
    damaged("/" + name + " has an unknown kind");
  }

  // The entry `name` of the file, or nullopt for a link that is not one of ours (ignored).
  std::optional<CheckpointValue> read_link(const hdf5::File& file, const std::string& name) const {
    std::optional<hdf5::Dataset> dataset;
    std::optional<std::string> kind_text;
    try {
      if (!file.holds_dataset(name.c_str())) return std::nullopt;
      dataset = hdf5::Dataset::open(file, name.c_str());
      if (!hdf5::has_attribute(*dataset, kKindAttribute)) return std::nullopt;  // someone else's
      kind_text = hdf5::read_string_attribute(*dataset, kKindAttribute);
    } catch (const hdf5::Error& error) {
      damaged("cannot read /" + name + ": " + error.description());
    }
    if (!kind_text) damaged("unreadable 'fiber_kind' of /" + name);
    CheckpointKind kind{};
    if (!parse_kind(*kind_text, kind)) {
      throw CheckpointError(prefix(path_) + "entry /" + name + " has the unknown kind '" +
                            *kind_text + "' (written by a newer program?)");
    }
    return read_entry(*dataset, name, kind);
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
  const std::filesystem::path temporary = temporary_beside(path);
  bool created = false;
  auto fail = [&](const std::string& what) {
    if (created) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
    }
    throw CheckpointError(prefix(path) + "cannot write (" + what + ")");
  };

  // What is at `path` is replaced only if it is a regular file: a rename over a FIFO or a device
  // would replace it silently, over a directory fail after all the writing.
  if (const std::string_view kind = non_regular_kind(path); !kind.empty()) {
    throw CheckpointError(prefix(path) + "is " + std::string(kind) + ", not a regular file");
  }
  // Create the temporary file through the OS first: its errno is the clearest explanation of an
  // unwritable directory. One a crash left is removed first, so that O_EXCL never opens anything
  // there (a FIFO would block the open, a symbolic link lead elsewhere); a directory stays.
  ::unlink(temporary.c_str());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail(temporary.string() + ": " + std::strerror(errno));
  ::close(fd);
  created = true;

  std::string step = temporary.string();  // what is being done, for the error
  try {
    hdf5::File file = hdf5::File::create(temporary);
    step = "cannot write the format marker";
    hdf5::write_format_marker(file, kMarker);
    for (const auto& [name, value] : entries_) {
      step = "cannot write /" + name;
      write_entry(file, name, value);
    }
    step = "cannot flush " + temporary.string();
    file.flush(H5F_SCOPE_GLOBAL);
    file.close_or_throw();
  } catch (const hdf5::Error& error) {
    fail(step + ": " + error.description());
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
  hdf5::File file;
  try {
    file = hdf5::File::open(path, hdf5::Access::read_only);
  } catch (const hdf5::Error& error) {
    throw CheckpointError(prefix(path) + error.description());
  }

  std::error_code size_error;
  const std::uintmax_t file_size = std::filesystem::file_size(path, size_error);
  const EntryReader reader(path_,
                           size_error ? std::numeric_limits<std::uintmax_t>::max() : file_size);

  std::optional<std::string> marker_problem;
  std::vector<std::string> names;
  try {
    marker_problem = hdf5::format_marker_problem(file, kMarker);
    if (!marker_problem) names = file.link_names(hdf5::LinkOrder::by_name);
  } catch (const hdf5::Error& error) {
    reader.damaged("cannot read the root group: " + error.description());
  }
  if (marker_problem) throw CheckpointError(prefix(path) + *marker_problem);
  for (const std::string& name : names) {
    if (auto value = reader.read_link(file, name)) entries_.emplace(name, std::move(*value));
  }
  try {
    file.close_or_throw();
  } catch (const hdf5::Error& error) {
    reader.damaged("cannot close: " + error.description());
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
