#include "mpi/error.hpp"

namespace fiber::mpi {

std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int size = 0;
  if (MPI_Error_string(code, text, &size) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, size);
}

}  // namespace fiber::mpi
