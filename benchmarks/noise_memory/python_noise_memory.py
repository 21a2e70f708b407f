"""Noise-table memory from Python: what a node spends (PSS summed over the master, its workers
and their task processes, /proc/PID/smaps_rollup) when N workers read a noise table held once
per node (fiber.NodeArray) or as a copy in every task process, against the same pool with no
table; as noise_memory.cpp measures it in C++. One configuration per master, run as a program
of its own, so that no parked workers of an earlier pool are counted:

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/noise_memory/python_noise_memory.py \\
        [--workers 1 4] [--floats 27000000]

Prints one line per configuration, then copies = (PSS with the table - PSS without) / table
size, and the ratio of the copies' PSS to the shared table's.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from proc_memory import pss_bytes  # noqa: E402

# 103 MiB of float32: the size of a noise table for a small ES run.
DEFAULT_FLOATS = 27_000_000
DEFAULT_WORKERS = (1, 4)
KINDS = ("none", "shared", "private")
# How long a run waits for every task process to have loaded its table (it polls).
LOAD_LIMIT_SECONDS = 300
# Each probe keeps its worker busy this long, so that every worker takes one.
PROBE_SECONDS = 0.2
SEED = 7
_loaded = {}


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            return [int(child) for child in listed.read().split()]
    except OSError:
        return []


def load(kind, table, floats):
    """In a task process: its table (a view of the node's copy, or a copy of its own), read
    whole so that every page is mapped; kept for the process's life."""
    if kind == "private":
        values = np.random.default_rng(SEED).standard_normal(floats, dtype=np.float32)
    elif kind == "shared":
        values = table.array
    else:
        values = np.zeros(1, dtype=np.float32)
    _loaded["table"] = values
    _loaded["sum"] = float(values.sum(dtype=np.float64))


def probe(_):
    time.sleep(PROBE_SECONDS)
    return os.getpid(), "sum" in _loaded


def run(kind, workers, floats):
    """One configuration, in this process as the master: its PSS line as JSON."""
    import fiber

    with fiber.Pool(workers) as pool:
        table = None
        if kind == "shared":
            table = fiber.NodeArray(
                shape=floats,
                dtype=np.float32,
                fill=lambda t: t.__setitem__(
                    ..., np.random.default_rng(SEED).standard_normal(floats, dtype=np.float32)
                ),
            )
        pool.broadcast(load, kind, table, floats)
        loaded = set()
        deadline = time.monotonic() + LOAD_LIMIT_SECONDS
        while len(loaded) < workers and time.monotonic() < deadline:
            loaded |= {pid for pid, ready in pool.map(probe, range(2 * workers), 1) if ready}
        processes = [os.getpid()]
        for worker in pool.workers():
            processes += [worker.pid] + children(worker.pid)
        pss = sum(pss_bytes(pid) or 0 for pid in processes)
    return {"kind": kind, "workers": workers, "processes": len(processes), "pss": pss}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=list(DEFAULT_WORKERS))
    parser.add_argument("--floats", type=int, default=DEFAULT_FLOATS)
    parser.add_argument("--run", nargs=2, metavar=("KIND", "WORKERS"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.run:
        # This file as a module (its folder is sys.path[0]): its functions then travel by
        # reference and share the module's globals in a task process, where __main__'s would
        # each bring a copy of them.
        import python_noise_memory

        kind, workers = arguments.run
        print(json.dumps(python_noise_memory.run(kind, int(workers), arguments.floats)))
        return
    mib = 1 << 20
    table_bytes = arguments.floats * np.dtype(np.float32).itemsize
    print(f"table: {table_bytes / mib:.1f} MiB")
    print(
        "workers,processes,pss_none_mib,pss_shared_mib,pss_private_mib,"
        "shared_copies,private_copies,private_over_shared"
    )
    for workers in arguments.workers:
        measured = {}
        for kind in KINDS:
            command = [sys.executable, __file__, "--run", kind, str(workers)]
            command += ["--floats", str(arguments.floats)]
            line = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            measured[kind] = json.loads(line.strip().splitlines()[-1])
        none, shared, private = (measured[kind]["pss"] for kind in KINDS)
        print(
            f"{workers},{measured['shared']['processes']},{none / mib:.1f},{shared / mib:.1f},"
            f"{private / mib:.1f},{(shared - none) / table_bytes:.2f},"
            f"{(private - none) / table_bytes:.2f},{(private - none) / (shared - none):.2f}"
        )


if __name__ == "__main__":
    main()
