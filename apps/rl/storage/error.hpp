// The exceptions of fiber_rl_storage. Every message is one line that names the file and the
// problem, e.g. "checkpoint /runs/a/ckpt.h5: damaged (checksum mismatch in /theta)"; no HDF5
// error stack is ever printed.
//
// Misuse of the API (a row of the wrong length, an unknown column, an invalid name) throws
// std::invalid_argument instead.
#pragma once

#include <stdexcept>

namespace fiber::rl {

// Base of the storage errors: a file could not be read or written.
class StorageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run log could not be created, opened, appended to or read.
class RunLogError : public StorageError {
 public:
  using StorageError::StorageError;
};

// A checkpoint could not be written or read: missing, truncated, garbage, damaged (checksum
// mismatch), not a fiber checkpoint, or an entry missing or of another type.
class CheckpointError : public StorageError {
 public:
  using StorageError::StorageError;
};

}  // namespace fiber::rl
