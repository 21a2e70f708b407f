#!/usr/bin/python3
"""A parked worker's reuse by a Python pool, repeated: pool_bench.py measures the second pool once
per run, which on this noisy 2-core machine says little; this measures it `--cycles` times in one
run and prints the medians, so that two builds can be compared in alternated runs.

    PYTHONPATH=<build>/python /usr/bin/python3 parked_reuse.py [--cycles N]

Each cycle makes a pool of 5 workers 0.2 s after the last one ended (its workers parked, their
standby task processes formed, as in pool_bench.py), times Pool() and its first and second map of
one empty task per worker (chunksize 1), and ends it. Then, in a pool of 4 beside a parked
worker, `--cycles` times: resize(5) 0.2 s after the last resize(4), and the map after it. One line
on stdout: the medians in ms (pool_made, first_map, second_map, resize, map_after_resize), the
cycles and the load average at the end.
"""

import argparse
import os
import py_compile
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import tasks  # noqa: E402

import fiber  # noqa: E402

WORKERS = 5
# As pool_bench.py's STAGE_PAUSE_SECONDS: long enough for parked workers' standbys to form.
PAUSE_SECONDS = 0.2
CYCLES = 8
MILLISECONDS = 1e3


def timed(function, *arguments):
    start = time.perf_counter()
    value = function(*arguments)
    return (time.perf_counter() - start) * MILLISECONDS, value


def one_map(pool, workers):
    milliseconds, results = timed(pool.map, tasks.empty, list(range(workers)), 1)
    if results != list(range(workers)):
        sys.exit("parked_reuse: a map returned a wrong result")
    return milliseconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=CYCLES, help="pools made (and resizes)")
    args = parser.parse_args()
    if args.cycles < 1:
        sys.exit("parked_reuse: --cycles must be at least 1")
    # The workers import the tasks from their bytecode, as in pool_bench.py.
    py_compile.compile(tasks.__file__, doraise=True)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    times = {name: [] for name in ("pool_made", "first_map", "second_map", "resize",
                                   "map_after_resize")}
    with fiber.Pool(WORKERS) as first:
        one_map(first, WORKERS)
    for _ in range(args.cycles):
        time.sleep(PAUSE_SECONDS)
        milliseconds, pool = timed(fiber.Pool, WORKERS)
        times["pool_made"].append(milliseconds)
        times["first_map"].append(one_map(pool, WORKERS))
        times["second_map"].append(one_map(pool, WORKERS))
        pool.terminate()
        pool.join()
    with fiber.Pool(WORKERS - 1) as pool:
        one_map(pool, WORKERS - 1)
        for _ in range(args.cycles):
            time.sleep(PAUSE_SECONDS)
            milliseconds, _ = timed(pool.resize, WORKERS)
            times["resize"].append(milliseconds)
            times["map_after_resize"].append(one_map(pool, WORKERS))
            pool.resize(WORKERS - 1)
    print(" ".join(f"{name}={statistics.median(values):.2f}" for name, values in times.items()),
          f"cycles={args.cycles} load={os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
