// An MPI_Info object, freed when destroyed.
#pragma once

#include <mpi.h>

#include <string>

#include "mpi/error.hpp"

namespace fiber::mpi {

class Info {
 public:
  Info() { check(MPI_Info_create(&info_), "MPI_Info_create"); }
  ~Info() {
    if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);  // nothing to do if it fails
  }
  Info(const Info&) = delete;
  Info& operator=(const Info&) = delete;

  void set(const std::string& key, const std::string& value) {
    check(MPI_Info_set(info_, key.c_str(), value.c_str()), "MPI_Info_set");
  }
  MPI_Info get() const { return info_; }

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace fiber::mpi
