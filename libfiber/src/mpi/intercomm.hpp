// An intercommunicator to one spawned worker (or, in a worker, to the master), disconnected when
// destroyed. Boost.MPI frees such communicators with MPI_Comm_free, which leaves the processes
// connected (docs/platform.md, "Boost.MPI does not disconnect"), hence this thin owner.
#pragma once

#include <mpi.h>

#include <utility>

#include "log.hpp"
#include "mpi/error.hpp"

namespace fiber::mpi {

class Intercomm {
 public:
  Intercomm() = default;
  explicit Intercomm(MPI_Comm comm) : comm_(comm) {}
  ~Intercomm() { disconnect(); }
  Intercomm(Intercomm&& other) noexcept : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}
  Intercomm& operator=(Intercomm&& other) noexcept {
    if (this != &other) {
      disconnect();
      comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    }
    return *this;
  }
  Intercomm(const Intercomm&) = delete;
  Intercomm& operator=(const Intercomm&) = delete;

  MPI_Comm get() const { return comm_; }

  // Forgets the communicator without disconnecting: for a peer that died, where a disconnect
  // would wait forever.
  void release() { comm_ = MPI_COMM_NULL; }

  // Waits for pending communication on both sides, then separates the processes. (Also called
  // from the destructor: a failure is said, not thrown.)
  void disconnect() {
    if (comm_ == MPI_COMM_NULL) return;
    int rc = MPI_Comm_disconnect(&comm_);
    if (rc != MPI_SUCCESS) {
      log::warn("MPI_Comm_disconnect failed: {}", error_text(rc));
    }
    comm_ = MPI_COMM_NULL;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace fiber::mpi
