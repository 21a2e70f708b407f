// What fiber's launch_defaults.cpp sets for a local run (PLATFORM.md facts 1, 2, 3, 4, 7, 14),
// for the benchmarks' plain-MPI floors: with these, the only difference between a floor and the
// fiber run beside it is fiber itself. Call before MPI_Init; the caller's settings win, and
// spawned processes inherit them.
#pragma once

#include <cstdlib>

namespace fiber_benchmarks {

inline void set_fiber_mpi_defaults() {
  const char* defaults[][2] = {
      {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
      {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
      {"OMPI_MCA_pml", "ucx"},
      {"OMPI_MCA_pml_ucx_tls", "any"},
      {"OMPI_MCA_pml_ucx_devices", "any"},
      {"OMPI_MCA_mpi_yield_when_idle", "1"},
      {"OMPI_MCA_orte_enable_recovery", "1"},
      {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
      {"OMPI_MCA_btl_tcp_if_include", "lo"},
      {"OMPI_MCA_oob_tcp_if_include", "lo"},
  };
  for (const auto& [name, value] : defaults) setenv(name, value, /*overwrite=*/0);
}

}  // namespace fiber_benchmarks
