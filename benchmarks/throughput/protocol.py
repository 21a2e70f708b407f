"""The throughput measurements of fiber_throughput, for the Python peers: for 1, 2 and 4 workers,
a map of an empty function at chunksize 1 and at automatic chunks (the peer's own choice, or
multiprocessing's rule, len / (4 x workers) rounded up, where the peer has none), and rounds of
one apply_async per worker followed by waiting for all of them. Best of 3 each; one CSV line per
measurement on stdout, in fiber_throughput's format (chunksize 0 = automatic):

    framework,mode,workers,chunksize,tasks,seconds,tasks_per_second
"""

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peers  # noqa: E402

WORKER_COUNTS = (1, 2, 4)
REPEATS = 3
WARM_UP_TASKS = 100


def empty(x):
    return x


def parse_args(description, sizes, quick_sizes):
    """sizes: tasks per measurement (map at chunksize 1, map at automatic chunks, apply_async)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        help="a tenth of the default tasks per measurement")
    parser.add_argument("--tasks", type=int, help="N tasks for every measurement")
    args = parser.parse_args()
    if args.tasks is not None and args.tasks <= 0:
        parser.error("--tasks needs a positive number")
    return (args.tasks,) * 3 if args.tasks else (quick_sizes if args.quick else sizes)


def automatic_chunksize(tasks, workers):
    """multiprocessing.Pool.map's default chunking, for peers without their own."""
    return math.ceil(tasks / (4 * workers))


def best_seconds(run):
    """The fastest of REPEATS runs: the machine is shared, the minimum is the least disturbed."""
    return min(run() for _ in range(REPEATS))


def report(framework, mode, workers, chunksize, tasks, seconds):
    per_second = tasks / seconds
    print(f"{framework},{mode},{workers},{chunksize},{tasks},{seconds:.6f},{per_second:.1f}",
          flush=True)
    label = chunksize if chunksize else "auto"
    print(f"{framework:<15} {mode:<11} workers {workers} chunksize {label:<4} {tasks:8d} tasks "
          f"{seconds:7.3f} s {per_second:10.0f} tasks/s {1e6 / per_second:7.2f} us/task",
          file=sys.stderr, flush=True)


def measure(framework, workers, sizes, pool_map, apply_round):
    """pool_map(items, chunksize) returns the list of results (chunksize None: automatic);
    apply_round(args) submits one apply_async per argument and returns their results."""
    single, chunked, apply_async = sizes
    for chunksize, tasks in ((1, single), (None, chunked)):
        items = list(range(tasks))
        pool_map(list(range(WARM_UP_TASKS)), chunksize)
        peers.hang_if_asked(framework)

        def run():
            start = time.perf_counter()
            results = pool_map(items, chunksize)
            elapsed = time.perf_counter() - start
            if list(results) != items:
                sys.exit(f"{framework}: map returned a wrong result")
            return elapsed

        report(framework, "map", workers, chunksize or 0, tasks, best_seconds(run))

    rounds = max(1, apply_async // workers)
    arguments = list(range(workers))

    def run_rounds(count):
        for _ in range(count):
            if apply_round(arguments) != arguments:
                sys.exit(f"{framework}: apply_async returned a wrong result")

    run_rounds(max(1, WARM_UP_TASKS // workers))

    def run():
        start = time.perf_counter()
        run_rounds(rounds)
        return time.perf_counter() - start

    report(framework, "apply_async", workers, 1, rounds * workers, best_seconds(run))
