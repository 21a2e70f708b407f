#include "storage/hdf5/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "storage/file_kind.hpp"
#include "storage/hdf5/error.hpp"

namespace fiber::rl::hdf5 {

namespace {

// The errors of a file HDF5 was not asked to open yet carry the codes HDF5 gives the same
// failures.
Error cannot_open(const std::string& reason) {
  return Error({H5E_FILE, H5E_CANTOPENFILE}, std::string("cannot open (") + reason + ")");
}

Error not_hdf5(std::string description) {
  return Error({H5E_FILE, H5E_NOTHDF5}, std::move(description));
}

// The size of the file at `path` as the operating system sees it, or the Error saying why it
// cannot be opened (missing, a directory, a FIFO or a device, empty). A FIFO is found before it is
// opened, and opened (if it becomes one in between) without waiting for a writer: never blocks.
off_t openable_size(const std::filesystem::path& path, Access access) {
  auto refuse_kind = [](std::string_view kind) {
    if (!kind.empty()) throw cannot_open("is " + std::string(kind) + ", not a regular file");
  };
  refuse_kind(non_regular_kind(path));
  const int fd = ::open(
      path.c_str(), (access == Access::read_write ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw cannot_open(std::strerror(errno));
  struct stat st {};
  const int stat_result = ::fstat(fd, &st);
  const int stat_errno = errno;
  ::close(fd);
  if (stat_result != 0) throw cannot_open(std::strerror(stat_errno));
  refuse_kind(non_regular_kind(st.st_mode));
  if (st.st_size == 0) throw not_hdf5("empty file (0 bytes)");
  return st.st_size;
}

}  // namespace

File File::create(const std::filesystem::path& path, Locking locking) {
  silence();
  const PropertyList fapl = PropertyList::file_access(locking);
  return File(checked_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id())));
}

File File::open(const std::filesystem::path& path, Access access, Locking locking) {
  silence();
  const off_t size = openable_size(path, access);
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0) throw not_hdf5("not an HDF5 file (no HDF5 signature: garbage or overwritten)");
  if (is_hdf5 < 0) {
    const Error error = last_error("HDF5 cannot read it");
    throw Error(error.code(), "cannot open (" + error.description() + ")");
  }
  const PropertyList fapl = PropertyList::file_access(locking);
  const hid_t id = H5Fopen(path.c_str(),
                           access == Access::read_write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.id());
  if (id >= 0) return File(id);
  const Error error = last_error("HDF5 cannot read its metadata");
  if (error.is_lock_conflict()) {
    throw Error(error.code(), "in use by another process (the file is locked)");
  }
  if (error.is_truncated_file()) {
    throw Error(error.code(), "damaged (truncated: " + std::to_string(size) +
                                  " bytes, fewer than HDF5 recorded)");
  }
  throw Error(error.code(), "damaged (cannot open: " + error.description() + ")");
}

void File::flush(H5F_scope_t scope) const { check(H5Fflush(id(), scope)); }

int File::descriptor() const {
  void* handle = nullptr;
  check(H5Fget_vfd_handle(id(), H5P_DEFAULT, &handle));
  if (handle == nullptr) throw Error({}, "HDF5 gave no file descriptor");
  return *static_cast<int*>(handle);
}

}  // namespace fiber::rl::hdf5
