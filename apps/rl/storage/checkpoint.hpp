// Checkpoints: a set of named values (double, int64 and uint64 scalars and vectors, strings,
// byte blobs such as an RNG's state) in one HDF5 file, written atomically and checksummed.
//
//   CheckpointWriter w;
//   w.put("theta", theta);                 // std::vector<double>
//   w.put("generation", std::int64_t{g});  // any integer: signed -> int64, unsigned -> uint64
//   w.put("rng", rng_state);               // Bytes (std::vector<std::byte>)
//   w.put("config", config_text);          // std::string
//   w.commit("run/checkpoint.h5");
//
//   CheckpointReader r("run/checkpoint.h5");  // reads and verifies everything, or throws
//   std::vector<double> theta = r.vector("theta");
//   std::int64_t g = r.int64("generation");
//   if (r.has("rng")) rng_state = r.bytes("rng");
//
// commit(path) writes `path + ".tmp"` in the same directory (created anew: one a crash left is
// removed first), flushes and closes it, fsyncs it, renames it over `path` and fsyncs the
// directory: a crash at any point leaves either the previous checkpoint or the new one at `path`,
// never a mix or a partial file. What is at `path` is replaced only if it is a regular file (a
// FIFO, a directory or a device is a CheckpointError). Whether a regular file there may be
// replaced (another run's checkpoint, a file of someone else) is the caller's decision
// (run/checkpoint_start.hpp).
//
// In the file each value is a dataset under the root, named as given, 1-D, chunked, with a
// Fletcher32 checksum per chunk (scalars: shape (1,)), and an attribute `fiber_kind` ("float64",
// "int64", "uint64", "float64[]", "int64[]", "uint64[]", "string", "bytes"). The root carries
// `format` = "fiber-checkpoint" and `version` = 1. h5py: f["theta"][:], f["generation"][0].
//
// Every problem reading a checkpoint - missing file, truncated, empty, garbage, damaged
// superblock or metadata, checksum mismatch in the data, a foreign HDF5 file, a missing entry, an
// entry of another type - throws CheckpointError with one line naming the path and the problem;
// HDF5 prints nothing. Not thread-safe: use one thread at a time.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "storage/error.hpp"

namespace fiber::rl {

using Bytes = std::vector<std::byte>;

// What a checkpoint entry holds.
enum class CheckpointKind {
  float64,
  int64,
  uint64,
  float64_vector,
  int64_vector,
  uint64_vector,
  string,
  bytes,
};

// "float64", "int64[]", "string", ... (the `fiber_kind` attribute in the file).
std::string_view to_string(CheckpointKind kind);

namespace detail {
using CheckpointValue =
    std::variant<double, std::int64_t, std::uint64_t, std::vector<double>,
                 std::vector<std::int64_t>, std::vector<std::uint64_t>, std::string, Bytes>;
CheckpointKind kind_of(const CheckpointValue& value);
}  // namespace detail

class CheckpointWriter {
 public:
  // Adds (or replaces) an entry. Names: not empty, no '/' and no NUL, not "." (otherwise
  // std::invalid_argument).
  void put(std::string_view name, double value);
  void put(std::string_view name, std::int64_t value);
  void put(std::string_view name, std::uint64_t value);
  // Other integer types: signed ones are stored as int64, unsigned ones as uint64.
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, std::int64_t> &&
           !std::same_as<T, std::uint64_t>) void put(std::string_view name, T value) {
    if constexpr (std::is_signed_v<T>) {
      put(name, static_cast<std::int64_t>(value));
    } else {
      put(name, static_cast<std::uint64_t>(value));
    }
  }
  void put(std::string_view name, std::vector<double> values);
  void put(std::string_view name, std::vector<std::int64_t> values);
  void put(std::string_view name, std::vector<std::uint64_t> values);
  void put(std::string_view name, std::string text);  // any bytes, embedded NULs included
  void put(std::string_view name, const char* text) { put(name, std::string(text)); }
  void put(std::string_view name, Bytes bytes);
  void put_bytes(std::string_view name, const void* data, std::size_t size);

  bool has(std::string_view name) const;
  void erase(std::string_view name);
  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }

  // Writes the entries atomically to `path` (see above); the writer keeps its entries. Throws
  // CheckpointError ("checkpoint PATH: cannot write (...)") and removes the temporary file on
  // failure; the previous checkpoint at `path`, if any, is then untouched.
  void commit(const std::filesystem::path& path) const;

 private:
  std::map<std::string, detail::CheckpointValue, std::less<>> entries_;
};

class CheckpointReader {
 public:
  // Opens `path`, checks the format marker and reads every entry, verifying the checksums.
  explicit CheckpointReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  bool has(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  // The entry's kind; CheckpointError if it is missing.
  CheckpointKind kind(std::string_view name) const;

  // Typed access. A missing entry, or an entry of another kind, throws CheckpointError
  // ("checkpoint PATH: no entry 'x'", "checkpoint PATH: entry 'x' is int64, not float64[]").
  // int64() also accepts a uint64 entry that fits, and uint64() a non-negative int64 one.
  double float64(std::string_view name) const;
  std::int64_t int64(std::string_view name) const;
  std::uint64_t uint64(std::string_view name) const;
  const std::vector<double>& vector(std::string_view name) const;
  const std::vector<std::int64_t>& int64_vector(std::string_view name) const;
  const std::vector<std::uint64_t>& uint64_vector(std::string_view name) const;
  const std::string& string(std::string_view name) const;
  const Bytes& bytes(std::string_view name) const;

 private:
  const detail::CheckpointValue& entry(std::string_view name) const;
  [[noreturn]] void wrong_kind(std::string_view name, CheckpointKind wanted) const;

  std::filesystem::path path_;
  std::map<std::string, detail::CheckpointValue, std::less<>> entries_;
};

}  // namespace fiber::rl
