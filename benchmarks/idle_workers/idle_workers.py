"""Runs idle_workers (what idle workers cost: held, running a task, parked) on simulated nodes,
one mpirun per pool size, and passes its CSV lines on (the header first with --header).

    benchmarks/idle_workers/idle_workers.py BUILD [--workers 16 64 128] [--nodes 4]
        [--seconds 10] [--header]

Every simulated node is this machine, so the machine's busy share counts all of them; the
workers of nodeA share the master's host (they lend it their task processes), the others do
not (as on a cluster)."""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import simulated_nodes  # noqa: E402

HEADER = "nodes,workers,where,state,measure,value"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--workers", type=int, nargs="+", default=[16, 64, 128])
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--header", action="store_true")
    args = parser.parse_args()
    if args.header:
        print(HEADER, flush=True)
    program = os.path.join(args.build, "benchmarks", "idle_workers", "idle_workers")
    failed = False
    with tempfile.TemporaryDirectory(prefix="idle_workers.") as work:
        for workers in args.workers:
            hostfile = os.path.join(work, "hostfile")
            simulated_nodes.write_hostfile(hostfile, workers, args.nodes)
            env = simulated_nodes.launch_environment(hostfile)
            command = ["mpirun", "-n", "1", program, "--workers", str(workers),
                       "--seconds", str(args.seconds)]
            status = subprocess.run(command, env=env).returncode
            if status != 0:
                print(f"idle_workers: {workers} workers on {args.nodes} nodes: mpirun exited "
                      f"with status {status}", file=sys.stderr, flush=True)
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
