"""Runs on the simulated nodes of tests/multinode (a fake ssh that starts each node's daemon on
this machine, and a hostfile of nodeA, nodeB, ...), for the scaling benchmarks (es_scaling,
ppo_scaling)."""

import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MULTINODE = os.path.join(ROOT, "tests", "multinode")


def write_hostfile(path, workers, nodes):
    """A hostfile of `nodes` nodes with room for `workers` workers and the master spread evenly:
    ceil((workers + 1) / nodes) slots each (the master takes one on nodeA)."""
    slots = math.ceil((workers + 1) / nodes)
    with open(path, "w") as out:
        for node in range(nodes):
            out.write(f"node{chr(ord('A') + node)} slots={slots}\n")


def launch_environment(hostfile, **extra):
    """The environment of tests/multinode/run.sh, with this run's hostfile and `extra` set."""
    agent = "fakessh-root.sh" if os.geteuid() == 0 else "fakessh-user.sh"
    env = dict(os.environ)
    env.update({
        "OMPI_MCA_plm_rsh_agent": os.path.join(MULTINODE, agent),
        "OMPI_MCA_orte_default_hostfile": hostfile,
        "OMPI_MCA_oob_tcp_if_include": "lo", "OMPI_MCA_btl_tcp_if_include": "lo",
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "FIBER_OVERSUBSCRIBE": "1",
    })
    env.update(extra)
    return env
