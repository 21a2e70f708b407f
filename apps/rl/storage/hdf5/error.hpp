// hdf5::Error: an HDF5 failure as an exception that carries HDF5's own classification of it, the
// major and minor error codes of the innermost entry of the error stack (where the error arose),
// and that entry's description as one line. Callers classify by code, never by the text:
//
//   try { dataset.read(...); } catch (const hdf5::Error& error) {
//     if (error.is_checksum_mismatch()) ...;  // the data is damaged
//   }
//
// check() and friends turn the return value of an HDF5 C call into an exception.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace fiber::rl::hdf5 {

// An entry of HDF5's error stack: major (the part of HDF5, e.g. H5E_FILE) and minor (what went
// wrong, e.g. H5E_CANTOPENFILE). Invalid ids when the failure left no entry.
struct ErrorCode {
  hid_t major_id = H5I_INVALID_HID;
  hid_t minor_id = H5I_INVALID_HID;
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string description)
      : std::runtime_error(description), code_(code), description_(std::move(description)) {}

  ErrorCode code() const noexcept { return code_; }
  hid_t major_id() const noexcept { return code_.major_id; }
  hid_t minor_id() const noexcept { return code_.minor_id; }
  const std::string& description() const noexcept { return description_; }

  // The Fletcher32 checksum of a chunk does not match its data: the data is damaged.
  bool is_checksum_mismatch() const noexcept;
  // Another process holds the file's lock.
  bool is_lock_conflict() const noexcept;
  // The file is shorter than its superblock says.
  bool is_truncated_file() const noexcept;

 private:
  ErrorCode code_;
  std::string description_;
};

// Turns off HDF5's automatic error printing for the calling thread. The library is built
// thread-safe, where that setting is per thread, so every entry point (File::create, File::open)
// calls this; only the first call in a thread does anything. The first call in the process, before
// HDF5 initializes, also keeps HDF5 from shutting down at exit (H5dont_atexit): after a failed
// write (disk full) HDF5 1.10 cannot close the file ("slist already enabled?") and its shutdown
// then closes it again on freed memory, a segfault at exit. Every file is closed by its owner
// (RAII) instead; a file whose close failed is left to the operating system. Only HDF5's C API is
// used, so that its C++ library, which shuts HDF5 down when it is unloaded, is not linked in.
void silence();

// The innermost entry of the calling thread's error stack as an Error (its description with
// newlines removed; for a failed system call, the system's message), or `fallback` if the stack
// is empty. Call right after the failing HDF5 call: the next API call clears the stack.
Error last_error(std::string_view fallback = "HDF5 error");

// The identifier `id`, or last_error() thrown if it is invalid (negative).
hid_t checked_id(hid_t id);
// Throws last_error() if `status` (an herr_t) is negative.
void check(herr_t status);
// The answer of a yes/no call (an htri_t); last_error() thrown if it failed (negative).
bool truth(htri_t answer);

}  // namespace fiber::rl::hdf5
