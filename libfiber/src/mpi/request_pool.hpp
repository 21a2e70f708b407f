// Requests of many peers in one array, so that one MPI_Testsome looks at them all (rabauke/mpl's
// request pool). The pool owns them: those still active when it goes are cancelled and freed.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace fiber::mpi {

class RequestPool {
 public:
  RequestPool() = default;
  ~RequestPool();
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  // A new slot, holding `request` (the pool owns it from now on); returns its index.
  std::size_t add(MPI_Request request);
  // Slot `index`, for the MPI call that starts its next operation.
  MPI_Request* at(std::size_t index) { return &requests_[index]; }
  std::size_t size() const { return requests_.size(); }

  // The completed requests: MPI_Testsome's return code; `completed` is MPI_UNDEFINED when no
  // request is active, else the first `completed` entries of indices() and statuses() say which.
  int test_some(int& completed);
  const std::vector<int>& indices() const { return indices_; }
  const std::vector<MPI_Status>& statuses() const { return statuses_; }

  // Cancels the operation of slot `index`: waits for the cancel to complete when `wait`, else
  // frees the request (a peer that is gone may never let a wait return).
  int cancel(std::size_t index, bool wait);

 private:
  std::vector<MPI_Request> requests_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace fiber::mpi
