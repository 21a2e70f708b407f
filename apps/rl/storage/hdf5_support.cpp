#include "storage/hdf5_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace fiber::rl::detail {

void silence_hdf5() {
  thread_local bool silenced = false;
  if (silenced) return;
  static const bool no_shutdown_at_exit = H5dont_atexit() >= 0;  // before HDF5 initializes
  static_cast<void>(no_shutdown_at_exit);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  silenced = true;
}

namespace {

herr_t collect_error(unsigned /*n*/, const H5E_error2_t* error, void* data) {
  auto& out = *static_cast<std::vector<std::string>*>(data);
  std::string text = error->desc != nullptr ? error->desc : "";
  if (text.empty()) {
    char buffer[256] = {};
    if (H5Eget_msg(error->min_num, nullptr, buffer, sizeof buffer) > 0) text = buffer;
  }
  out.push_back(std::move(text));
  return 0;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::vector<std::string> error_stack() {
  std::vector<std::string> stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &stack);
  return stack;
}

bool mentions(const std::vector<std::string>& stack, std::string_view needle) {
  const std::string n = lower(needle);
  return std::any_of(stack.begin(), stack.end(),
                     [&](const std::string& s) { return lower(s).find(n) != std::string::npos; });
}

std::string innermost(const std::vector<std::string>& stack, std::string_view fallback) {
  // A failed system call reads "file write failed: time = ..., errno = 28, error message = 'No
  // space left on device', buf = ...": its error message is what matters.
  constexpr std::string_view kSystemMessage = "error message = '";
  for (const std::string& s : stack) {
    if (s.empty()) continue;
    const std::size_t start = s.find(kSystemMessage);
    if (start != std::string::npos) {
      const std::size_t from = start + kSystemMessage.size();
      const std::size_t end = s.find('\'', from);
      if (end != std::string::npos)
        return one_line(s.substr(0, s.find(':')) + ": " + s.substr(from, end - from));
    }
    return one_line(s);
  }
  return std::string(fallback);
}

bool checksum_failure(const std::vector<std::string>& stack) {
  return mentions(stack, "fletcher32") || mentions(stack, "checksum");
}

namespace {

// HDF5's Fletcher32 (H5_checksum_fletcher32): 16-bit big-endian words, sums folded every 360
// words so that they never overflow.
constexpr std::size_t kFletcherBlockWords = 360;

std::uint32_t fold(std::uint32_t sum) { return (sum & 0xffff) + (sum >> 16); }

std::uint32_t fletcher32(const unsigned char* data, std::size_t size) {
  std::uint32_t sum1 = 0, sum2 = 0;
  std::size_t words = size / 2;
  while (words > 0) {
    const std::size_t block = std::min(words, kFletcherBlockWords);
    words -= block;
    for (std::size_t k = 0; k < block; ++k, data += 2) {
      sum1 += static_cast<std::uint32_t>(data[0] << 8 | data[1]);
      sum2 += sum1;
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  if (size % 2 != 0) {
    sum1 += static_cast<std::uint32_t>(data[0] << 8);
    sum2 += sum1;
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  return fold(sum2) << 16 | fold(sum1);
}

}  // namespace

std::uint32_t little_endian_uint32(const unsigned char* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
         static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
}

bool matches_fletcher32(const unsigned char* data, std::size_t size, std::uint32_t stored) {
  const std::uint32_t sum = fletcher32(data, size);
  const std::uint32_t swapped = (sum & 0x00ff00ff) << 8 | (sum & 0xff00ff00) >> 8;
  return stored == sum || stored == swapped;
}

Handle file_access_properties(bool lock) {
  Handle fapl = plist_handle(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl) return fapl;
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  // Lock against a second writer, but do not fail on file systems without locks (e.g. Lustre).
  H5Pset_file_locking(fapl.get(), lock, true);
  H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  return fapl;
}

Handle open_file(const std::filesystem::path& path, bool writable, std::string& problem,
                 bool lock) {
  silence_hdf5();
  // The operating system's view first: it names missing files and permissions precisely.
  const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) {
    problem = std::string("cannot open (") + std::strerror(errno) + ")";
    return {};
  }
  struct stat st {};
  const int stat_result = ::fstat(fd, &st);
  ::close(fd);
  if (stat_result != 0) {
    problem = std::string("cannot open (") + std::strerror(errno) + ")";
    return {};
  }
  if (S_ISDIR(st.st_mode)) {
    problem = "cannot open (is a directory)";
    return {};
  }
  if (st.st_size == 0) {
    problem = "empty file (0 bytes)";
    return {};
  }
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0) {
    problem = "not an HDF5 file (no HDF5 signature: garbage or overwritten)";
    return {};
  }
  if (is_hdf5 < 0) {
    problem = "cannot open (" + innermost(error_stack(), "HDF5 cannot read it") + ")";
    return {};
  }
  Handle fapl = file_access_properties(lock);
  Handle file =
      file_handle(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()));
  if (!file) {
    const std::vector<std::string> stack = error_stack();
    if (mentions(stack, "unable to lock file")) {
      problem = "in use by another process (the file is locked)";
    } else if (mentions(stack, "truncated file")) {
      problem =
          "damaged (truncated: " + std::to_string(st.st_size) + " bytes, fewer than HDF5 recorded)";
    } else {
      problem = "damaged (cannot open: " + innermost(stack, "HDF5 cannot read its metadata") + ")";
    }
  }
  return file;
}

Handle string_type(std::size_t size) {
  Handle type = type_handle(H5Tcopy(H5T_C_S1));
  if (!type) return type;
  if (H5Tset_size(type.get(), std::max<std::size_t>(size, 1)) < 0 ||
      H5Tset_strpad(type.get(), H5T_STR_NULLPAD) < 0 ||
      H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    return {};
  }
  return type;
}

bool write_string_attribute(hid_t obj, const char* name, std::string_view value) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return false;
  Handle type = string_type(value.size());
  Handle space = space_handle(H5Screate(H5S_SCALAR));
  if (!type || !space) return false;
  Handle attr =
      attribute_handle(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr) return false;
  std::string padded(value);
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  return H5Awrite(attr.get(), type.get(), padded.data()) >= 0 && attr.close();
}

bool read_string_attribute(hid_t obj, const char* name, std::string& value) {
  if (H5Aexists(obj, name) <= 0) return false;
  Handle attr = attribute_handle(H5Aopen(obj, name, H5P_DEFAULT));
  if (!attr) return false;
  Handle type = type_handle(H5Aget_type(attr.get()));
  if (!type || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0) {
    return false;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string buffer(size, '\0');
  if (H5Aread(attr.get(), type.get(), buffer.data()) < 0) return false;
  buffer.erase(std::find(buffer.begin(), buffer.end(), '\0'), buffer.end());
  value = std::move(buffer);
  return true;
}

bool write_int64_attribute(hid_t obj, const char* name, long long value) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return false;
  Handle space = space_handle(H5Screate(H5S_SCALAR));
  if (!space) return false;
  Handle attr =
      attribute_handle(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  return attr && H5Awrite(attr.get(), H5T_NATIVE_LLONG, &value) >= 0 && attr.close();
}

bool read_int64_attribute(hid_t obj, const char* name, long long& value) {
  if (H5Aexists(obj, name) <= 0) return false;
  Handle attr = attribute_handle(H5Aopen(obj, name, H5P_DEFAULT));
  if (!attr) return false;
  Handle type = type_handle(H5Aget_type(attr.get()));
  if (!type || H5Tget_class(type.get()) != H5T_INTEGER) return false;
  return H5Aread(attr.get(), H5T_NATIVE_LLONG, &value) >= 0;
}

namespace {

#if H5_VERSION_GE(1, 12, 0)
using LinkInfo = H5L_info2_t;  // H5Literate is H5Literate2 from 1.12 on
#else
using LinkInfo = H5L_info_t;
#endif

herr_t collect_link(hid_t /*group*/, const char* name, const LinkInfo* /*info*/, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

bool link_names(hid_t group, bool creation_order, std::vector<std::string>& names) {
  names.clear();
  hsize_t index = 0;
  return H5Literate(group, creation_order ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC, &index,
                    collect_link, &names) >= 0;
}

}  // namespace fiber::rl::detail
