// Private to fiber_rl_storage: RAII handles over the HDF5 C API, silencing of HDF5's error
// printing, and turning HDF5's error stack into one line of text.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fiber::rl::detail {

// Turns off HDF5's automatic error printing for the calling thread. The library is built
// thread-safe, where that setting is per thread, so every entry point calls this; only the first
// call in a thread does anything. The first call in the process, before HDF5 initializes, also
// keeps HDF5 from shutting down at exit (H5dont_atexit): after a failed write (disk full) HDF5
// 1.10 cannot close the file ("slist already enabled?") and its shutdown then closes it again on
// freed memory, a segfault at exit. Every file is closed by its owner (RAII) instead; a file whose
// close failed is left to the operating system. Only HDF5's C API is used, so that its C++
// library, which shuts HDF5 down when it is unloaded, is not linked in.
void silence_hdf5();

// An HDF5 identifier closed by its destructor (with the close function of its kind).
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) {
    other.id_ = H5I_INVALID_HID;
  }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  // Closes now; false if HDF5 reported an error while closing (e.g. a failed final flush).
  bool close() noexcept {
    if (id_ < 0) return true;
    const herr_t status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  void reset() noexcept { close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Handle file_handle(hid_t id) { return {id, H5Fclose}; }
inline Handle group_handle(hid_t id) { return {id, H5Gclose}; }
inline Handle dataset_handle(hid_t id) { return {id, H5Dclose}; }
inline Handle space_handle(hid_t id) { return {id, H5Sclose}; }
inline Handle type_handle(hid_t id) { return {id, H5Tclose}; }
inline Handle plist_handle(hid_t id) { return {id, H5Pclose}; }
inline Handle attribute_handle(hid_t id) { return {id, H5Aclose}; }
inline Handle object_handle(hid_t id) { return {id, H5Oclose}; }

// The descriptions on the current error stack, innermost (where the error arose) first. Call
// right after the failing HDF5 call: the next API call clears the stack.
std::vector<std::string> error_stack();

// True if one of the descriptions contains `needle` (case-insensitive).
bool mentions(const std::vector<std::string>& stack, std::string_view needle);

// One line describing the error stack: the innermost description (newlines removed), or
// `fallback` if the stack is empty.
std::string innermost(const std::vector<std::string>& stack, std::string_view fallback);

// True if the error stack says that a filter found damaged data (Fletcher32 checksum mismatch).
bool checksum_failure(const std::vector<std::string>& stack);

// The 4-byte little-endian integer at `bytes` (how HDF5 stores a chunk's Fletcher32 checksum).
std::uint32_t little_endian_uint32(const unsigned char* bytes);

// True if `stored` is HDF5's Fletcher32 checksum of the `size` bytes at `data` (as its filter
// computes it when writing a chunk; or byte-swapped, as HDF5 before 1.6.3 wrote it).
bool matches_fletcher32(const unsigned char* data, std::size_t size, std::uint32_t stored);

// File access properties used for every file: metadata in the 1.8 format or newer (checksummed
// superblock and object headers, readable by HDF5 1.8+, h5py, h5dump), file locking (if `lock`)
// where the file system supports it, and a strong close (closing the file closes everything).
Handle file_access_properties(bool lock = true);

// Opens an existing HDF5 file. On failure returns an invalid handle and sets `problem` to one
// line without the path, e.g. "cannot open (No such file or directory)", "empty file (0 bytes)",
// "not an HDF5 file", "damaged (truncated file: ...)", "in use by another process (locked)".
Handle open_file(const std::filesystem::path& path, bool writable, std::string& problem,
                 bool lock = true);

// A fixed-length string type of `size` bytes (at least 1), NUL-padded, ASCII/UTF-8.
Handle string_type(std::size_t size);

// Writes a scalar string attribute `name` = `value` on the object `obj` (replacing one that
// exists). False on failure.
bool write_string_attribute(hid_t obj, const char* name, std::string_view value);
// Reads the string attribute `name` of `obj`; false if it is missing, not a string or unreadable.
bool read_string_attribute(hid_t obj, const char* name, std::string& value);
bool write_int64_attribute(hid_t obj, const char* name, long long value);
bool read_int64_attribute(hid_t obj, const char* name, long long& value);

// The names of the links in the group `group`, by creation order if `creation_order` (the group
// must track it) and by name otherwise. False on failure.
bool link_names(hid_t group, bool creation_order, std::vector<std::string>& names);

}  // namespace fiber::rl::detail
