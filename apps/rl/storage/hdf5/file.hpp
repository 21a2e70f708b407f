// hdf5::File: an HDF5 file, which is also its root group. Every file is made with the same access
// properties (PropertyList::file_access). An HDF5 failure throws hdf5::Error; open() puts why a
// file cannot be opened in one line without the path, e.g. "cannot open (No such file or
// directory)", "empty file (0 bytes)", "not an HDF5 file (...)", "damaged (truncated: ...)",
// "in use by another process (the file is locked)".
#pragma once

#include <filesystem>

#include "storage/hdf5/group.hpp"
#include "storage/hdf5/property_list.hpp"

namespace fiber::rl::hdf5 {

enum class Access { read_only, read_write };

class File : public Group {
 public:
  File() = default;

  // Creates `path`, replacing a file there.
  static File create(const std::filesystem::path& path, Locking locking = Locking::on);
  // Opens the existing HDF5 file `path`. The operating system's view first (it names a missing
  // file or a permission precisely), then the HDF5 signature, then HDF5's own open.
  static File open(const std::filesystem::path& path, Access access, Locking locking = Locking::on);

  // Writes what HDF5 holds in memory to the file; H5F_SCOPE_GLOBAL also for mounted files.
  void flush(H5F_scope_t scope = H5F_SCOPE_LOCAL) const;
  // The file's descriptor (for fsync).
  int descriptor() const;

 private:
  explicit File(hid_t id) : Group(id, H5Fclose) {}
};

}  // namespace fiber::rl::hdf5
