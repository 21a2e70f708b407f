// What the benchmarks' plain-MPI floors (no framework) share: the launch settings fiber's
// launch_defaults.cpp sets for a local run (docs/platform.md says why), so that the
// only difference between a floor and the fiber run beside it is fiber itself, and spawning
// copies of the program one process per spawn, as fiber spawns its workers.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace fiber_benchmarks {

// Call before MPI_Init; the caller's settings win, and spawned processes inherit them.
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
      {"UCX_LOG_FILE", "stderr"},  // not among the rows on stdout (docs/platform.md)
  };
  for (const auto& [name, value] : defaults) setenv(name, value, /*overwrite=*/0);
}

// Spawns `count` copies of this program, one per MPI_Comm_spawn, each started with `child_flag`
// as its only argument (it must know its role before MPI_Init); their intercommunicators.
inline std::vector<MPI_Comm> spawn_copies_of_self(const char* child_flag, int count) {
  // The daemon that starts a child resolves the command itself: /proc/self/exe would be its own.
  char executable[PATH_MAX] = {};
  if (readlink("/proc/self/exe", executable, sizeof executable - 1) < 0) {
    std::perror("readlink /proc/self/exe");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::string flag(child_flag);
  char* child_argv[] = {flag.data(), nullptr};
  std::vector<MPI_Comm> children(count, MPI_COMM_NULL);
  for (auto& child : children) {
    MPI_Comm_spawn(executable, child_argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child,
                   MPI_ERRCODES_IGNORE);
  }
  return children;
}

// In a copy started by spawn_copies_of_self (its argv[1] is `child_flag`): starts MPI and returns
// the intercommunicator to the master. MPI_COMM_NULL in the master, which has not started MPI.
inline MPI_Comm start_if_spawned_copy(int& argc, char**& argv, const char* child_flag) {
  if (argc < 2 || std::strcmp(argv[1], child_flag) != 0) return MPI_COMM_NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_get_parent(&parent);
  return parent;
}

}  // namespace fiber_benchmarks
