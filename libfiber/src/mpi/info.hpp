// An MPI_Info object, freed when destroyed.
#pragma once

#include <mpi.h>

#include <string>

namespace fiber::mpi {

class Info {
 public:
  Info() { MPI_Info_create(&info_); }
  ~Info() { MPI_Info_free(&info_); }
  Info(const Info&) = delete;
  Info& operator=(const Info&) = delete;

  void set(const std::string& key, const std::string& value) {
    MPI_Info_set(info_, key.c_str(), value.c_str());
  }
  MPI_Info get() const { return info_; }

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace fiber::mpi
