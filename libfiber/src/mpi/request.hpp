// One MPI request, owned: a request still active when its owner goes is freed (MPI_Request_free
// lets the operation finish on its own), never leaked.
#pragma once

#include <mpi.h>

#include <utility>

namespace fiber::mpi {

class Request {
 public:
  Request() = default;
  ~Request() { free(); }
  Request(Request&& other) noexcept : request_(std::exchange(other.request_, MPI_REQUEST_NULL)) {}
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      free();
      request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  // For the MPI call that starts the operation, and for MPI_Test/MPI_Wait.
  MPI_Request* get() { return &request_; }
  bool active() const { return request_ != MPI_REQUEST_NULL; }

 private:
  void free() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (active() && !finalized) MPI_Request_free(&request_);  // nothing more to do if it fails
  }
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace fiber::mpi
