#!/usr/bin/env bash
# Runs a program as the master on simulated nodes nodeA..nodeC (hostfile beside this script):
# Open MPI's rsh launcher is replaced by a script that starts each node's daemon in its own UTS
# namespace with that node's hostname (docs/platform.md, "Several nodes on one machine").
#   tests/multinode/run.sh PROGRAM [ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_MCA_plm_rsh_agent="$here/fakessh-root.sh"
else
  export OMPI_MCA_plm_rsh_agent="$here/fakessh-user.sh"
fi
# FIBER_MULTINODE_HOSTFILE: another hostfile of simulated nodes (clean_end.sh writes one of 4 x 32).
export OMPI_MCA_orte_default_hostfile="${FIBER_MULTINODE_HOSTFILE:-$here/hostfile}"
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The master lands on the first node, nodeA. FIBER_MULTINODE_LAUNCHER=fiberrun for tests that kill
# workers (mpirun alone, recovery on, does not end once a worker was lost on another node).
exec ${FIBER_MULTINODE_LAUNCHER:-mpirun} -n 1 "$@"
