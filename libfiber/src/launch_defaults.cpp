#include "launch_defaults.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace fiber::detail {
namespace {

const char* env(const char* name) { return std::getenv(name); }

void set_default(const char* name, const char* value) { setenv(name, value, /*overwrite=*/0); }

// "1"/"0" from an environment variable, or `otherwise`.
bool env_flag(const char* name, bool otherwise) {
  const char* value = env(name);
  if (!value || !*value) return otherwise;
  return std::string(value) != "0";
}

}  // namespace

bool runs_locally() {
  bool under_batch_system = env("SLURM_JOB_ID") || env("PBS_JOBID") || env("LSB_JOBID") ||
                            env("FLUX_JOB_ID") || env("COBALT_JOBID");
  bool has_hostfile = env("OMPI_MCA_orte_default_hostfile") != nullptr;
  return env_flag("FIBER_LOCAL", !under_batch_system && !has_hostfile);
}

bool oversubscription_allowed() { return env_flag("FIBER_OVERSUBSCRIBE", runs_locally()); }

void apply_launch_defaults() {
  // Containers and CI run as root; mpirun refuses it otherwise (docs/platform.md, "Running as
  // root").
  if (geteuid() == 0) {
    set_default("OMPI_ALLOW_RUN_AS_ROOT", "1");
    set_default("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  // Spawned processes reach each other over TCP unless UCX is used, with all three settings
  // (docs/platform.md, "Spawned processes need UCX"). Left alone if the user chose another PML.
  const char* pml = env("OMPI_MCA_pml");
  if (!pml || std::string(pml) == "ucx") {
    set_default("OMPI_MCA_pml", "ucx");
    set_default("OMPI_MCA_pml_ucx_tls", "any");
    set_default("OMPI_MCA_pml_ucx_devices", "any");
    // Every UCX transport but CMA. UCX 1.13's CMA (process_vm_readv into the sender's memory)
    // aborts the receiving process when the sender died mid-transfer: one killed worker took the
    // master down. Without it a dead sender is an error on that worker's requests alone, and
    // large messages on one node go through shared-memory copies instead, at no measured cost
    // here (docs/platform.md, "A worker killed mid-transfer").
    set_default("UCX_TLS", "^cma");
    // UCX logs to stdout unless told: its warnings (a message left unmatched at a worker's end)
    // landed in the rows that programs print there (docs/platform.md, "UCX logs to stdout").
    set_default("UCX_LOG_FILE", "stderr");
  }
  // docs/platform.md, "Idle processes must yield".
  set_default("OMPI_MCA_mpi_yield_when_idle", "1");
  // A dead worker must not kill the job (docs/platform.md, "MPI does not report a dead process").
  set_default("OMPI_MCA_orte_enable_recovery", "1");
  // A worker that exits 0 without MPI_Finalize's handshake with its node daemon (a lost worker's
  // siblings leave so; a finalize the daemon answers late) is otherwise an abnormal end, which
  // Open MPI announces to the worker's spawn with an event PMIx 4.2.2 refuses: one "PMIX ERROR:
  // BAD-PARAM" line each (docs/platform.md, "A clean end").
  set_default("OMPI_MCA_orte_allowed_exit_without_sync", "1");
  if (oversubscription_allowed()) set_default("OMPI_MCA_rmaps_base_oversubscribe", "1");
  // docs/platform.md, "Keep local traffic on loopback"; on a cluster the site decides.
  if (runs_locally()) {
    if (!env("OMPI_MCA_btl_tcp_if_exclude")) set_default("OMPI_MCA_btl_tcp_if_include", "lo");
    if (!env("OMPI_MCA_oob_tcp_if_exclude")) set_default("OMPI_MCA_oob_tcp_if_include", "lo");
  } else {
    // Node daemons started over ssh by mpirun itself, and detached from their ssh: with the
    // default (a tree of ssh sessions held open), the end of a lost node's session ended the whole
    // job (docs/platform.md, "A lost node forbids spawns"). Ignored by other launchers.
    set_default("OMPI_MCA_plm_rsh_no_tree_spawn", "1");
  }
}

}  // namespace fiber::detail
