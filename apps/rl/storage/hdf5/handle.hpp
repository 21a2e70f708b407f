// hdf5::Handle: an HDF5 identifier owned by an object, closed by its destructor with the close
// function of its kind. The typed wrappers (File, Group, Dataset, Dataspace, Datatype, Attribute,
// PropertyList) are Handles with the operations of their kind.
#pragma once

#include <hdf5.h>

#include "storage/hdf5/error.hpp"

namespace fiber::rl::hdf5 {

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
      close();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }

  hid_t id() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  // Closes now; false if HDF5 reported an error while closing (e.g. a failed final flush), when
  // hdf5::last_error() tells why.
  bool close() noexcept {
    if (id_ < 0) return true;
    const herr_t status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  // Closes now, throwing hdf5::last_error() if HDF5 reported an error.
  void close_or_throw() {
    if (!close()) throw last_error();
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

}  // namespace fiber::rl::hdf5
