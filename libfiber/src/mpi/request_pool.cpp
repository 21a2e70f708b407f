#include "mpi/request_pool.hpp"

namespace fiber::mpi {

RequestPool::~RequestPool() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (std::size_t index = 0; index < requests_.size(); ++index) cancel(index, false);
}

std::size_t RequestPool::add(MPI_Request request) {
  requests_.push_back(request);
  return requests_.size() - 1;
}

int RequestPool::test_some(int& completed) {
  indices_.resize(requests_.size());
  statuses_.resize(requests_.size());
  completed = MPI_UNDEFINED;
  if (requests_.empty()) return MPI_SUCCESS;
  return MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &completed,
                      indices_.data(), statuses_.data());
}

int RequestPool::cancel(std::size_t index, bool wait) {
  MPI_Request& request = requests_[index];
  if (request == MPI_REQUEST_NULL) return MPI_SUCCESS;
  int rc = MPI_Cancel(&request);
  if (rc != MPI_SUCCESS) return rc;
  return wait ? MPI_Wait(&request, MPI_STATUS_IGNORE) : MPI_Request_free(&request);
}

}  // namespace fiber::mpi
