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


def write_master_apart_hostfile(path, workers, slots):
    """A hostfile of nodeA with one slot, the master's, then nodes of `slots` slots (the last
    one as many as are left) for `workers` workers: every worker on a node other than the
    master's, as on a cluster whose master has a node of its own. Returns the node count."""
    names = [f"node{chr(ord('A') + node)}" for node in range(1 + math.ceil(workers / slots))]
    if len(names) > 26:
        raise ValueError(f"{workers} workers in nodes of {slots} slots need more than 25 nodes")
    with open(path, "w") as out:
        out.write(f"{names[0]} slots=1\n")
        for index, name in enumerate(names[1:]):
            out.write(f"{name} slots={min(slots, workers - index * slots)}\n")
    return len(names)


# A single spawn of 511 workers timed out in PMIx's lookup at its default wait; 1,024 workers
# started with 1,200 s (docs/platform.md, "A clean end"): OMPI_MCA_pmix_server_max_wait for the
# runs that spawn hundreds of workers at once.
PMIX_SERVER_MAX_WAIT = "1200"


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
