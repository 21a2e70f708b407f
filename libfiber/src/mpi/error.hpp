// MPI return codes as exceptions with MPI's own error text.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>

#include "fiber/errors.hpp"

namespace fiber::mpi {

std::string error_text(int code);

inline void check(int code, std::string_view what) {
  if (code != MPI_SUCCESS) {
    throw Error("fiber: " + std::string(what) + " failed: " + error_text(code));
  }
}

}  // namespace fiber::mpi
