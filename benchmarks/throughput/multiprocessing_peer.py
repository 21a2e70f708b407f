#!/usr/bin/python3
"""The peer for fiber_throughput: the same measurements on Python's multiprocessing.Pool.

For 1, 2 and 4 workers: pool.map of an empty function at chunksize 1 and at the default
chunking (None, reported as chunksize 0 like fiber's automatic chunks), and rounds of one
apply_async per worker followed by get() on all of them. Best of 3 each; one CSV line per
measurement on stdout, in fiber_throughput's format:

    framework,mode,workers,chunksize,tasks,seconds,tasks_per_second

Run it with /usr/bin/python3 (Debian's), e.g. /usr/bin/python3 multiprocessing_peer.py [--quick] [--tasks N]
"""

import argparse
import multiprocessing
import sys
import time

WORKER_COUNTS = (1, 2, 4)
REPEATS = 3
WARM_UP_TASKS = 1000
# Tasks per measurement (map at chunksize 1, map at default chunks, apply_async), chosen so that
# each takes roughly 0.3-2 s here; fewer than fiber_throughput's where Python is slower.
SIZES = (50_000, 2_000_000, 5_000)
QUICK_SIZES = (5_000, 200_000, 500)


def empty(x):
    return x


def best_seconds(run):
    """The fastest of REPEATS runs: the machine is shared, the minimum is the least disturbed."""
    return min(run() for _ in range(REPEATS))


def report(mode, workers, chunksize, tasks, seconds):
    per_second = tasks / seconds
    print(f"multiprocessing,{mode},{workers},{chunksize},{tasks},{seconds:.6f},{per_second:.1f}",
          flush=True)
    label = chunksize if chunksize else "auto"
    print(f"multiprocessing {mode:<11} workers {workers} chunksize {label:<4} {tasks:8d} tasks "
          f"{seconds:7.3f} s {per_second:10.0f} tasks/s {1e6 / per_second:7.2f} us/task",
          file=sys.stderr)


def measure_map(pool, workers, chunksize, tasks):
    items = list(range(tasks))
    pool.map(empty, range(WARM_UP_TASKS), chunksize)

    def run():
        start = time.perf_counter()
        results = pool.map(empty, items, chunksize)
        elapsed = time.perf_counter() - start
        if results != items:
            sys.exit("multiprocessing_peer: map returned a wrong result")
        return elapsed

    report("map", workers, chunksize or 0, tasks, best_seconds(run))


def measure_apply_async(pool, workers, tasks):
    """Rounds of one apply_async per worker, each round waiting for all of its results."""
    rounds = max(1, tasks // workers)

    def run_rounds(count):
        for _ in range(count):
            pending = [pool.apply_async(empty, (i,)) for i in range(workers)]
            if [result.get() for result in pending] != list(range(workers)):
                sys.exit("multiprocessing_peer: apply_async returned a wrong result")

    run_rounds(WARM_UP_TASKS // workers)

    def run():
        start = time.perf_counter()
        run_rounds(rounds)
        return time.perf_counter() - start

    report("apply_async", workers, 1, rounds * workers, best_seconds(run))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a tenth of the default tasks per measurement")
    parser.add_argument("--tasks", type=int, help="N tasks for every measurement")
    args = parser.parse_args()
    single, chunked, apply_async = QUICK_SIZES if args.quick else SIZES
    if args.tasks is not None:
        if args.tasks <= 0:
            parser.error("--tasks needs a positive number")
        single = chunked = apply_async = args.tasks

    for workers in WORKER_COUNTS:
        with multiprocessing.Pool(workers) as pool:
            measure_map(pool, workers, 1, single)
            measure_map(pool, workers, None, chunked)
            measure_apply_async(pool, workers, apply_async)


if __name__ == "__main__":
    main()
