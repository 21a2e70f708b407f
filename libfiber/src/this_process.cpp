#include "this_process.hpp"

#include <mpi.h>
#include <unistd.h>

#include <string>

#include "mpi/error.hpp"

namespace fiber::detail {
namespace {

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int size = 0;
  mpi::check(MPI_Get_processor_name(name, &size), "MPI_Get_processor_name");
  return std::string(name, size);
}

}  // namespace

WorkerInfo& this_process() {
  static WorkerInfo info{-1, host_name(), static_cast<long>(getpid())};
  return info;
}

}  // namespace fiber::detail
