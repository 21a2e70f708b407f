"""Runs fiber_stage_change on simulated nodes of 2 slots each (each node sees this machine's 2
cores): stages of 2 x NODES - 1 one-core workers (nodeA's other slot is the master's) and NODES - 1
two-core ones alternate within the allocation, not oversubscribed. Passes its CSV lines on.

    benchmarks/elasticity/stage_change.py BUILD [--nodes 16] [--changes 10]"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import simulated_nodes  # noqa: E402

SLOTS_PER_NODE = 2  # the machine's cores: a node cannot bind more one-core workers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--changes", type=int, default=10)
    args = parser.parse_args()
    program = os.path.join(args.build, "benchmarks", "elasticity", "fiber_stage_change")
    narrow = SLOTS_PER_NODE * args.nodes - 1
    with tempfile.TemporaryDirectory(prefix="stage_change.") as work:
        hostfile = os.path.join(work, "hostfile")
        simulated_nodes.write_hostfile(hostfile, narrow, args.nodes)
        # The allocation's slots are the point: fiber must not oversubscribe them.
        env = simulated_nodes.launch_environment(hostfile, FIBER_OVERSUBSCRIBE="0")
        command = ["mpirun", "-n", "1", program, str(narrow), str(args.nodes - 1),
                   str(SLOTS_PER_NODE), str(args.changes)]
        status = subprocess.run(command, env=env).returncode
    if status != 0:
        print(f"stage_change: mpirun exited with status {status}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
