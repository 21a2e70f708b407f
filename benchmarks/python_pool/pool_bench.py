#!/usr/bin/python3
"""The Python pool benchmark: the Fiber paper's Python measurements, the same code for fiber's
Python front end and for each peer (--module), one framework per run.

    /usr/bin/python3 pool_bench.py --module fiber|multiprocessing|ipyparallel|mpi4py.futures|dask
                                   [--quick] [--total S] [--task-seconds S...] [--repeats N]
                                   [--limit S] [--megabytes M]

Each framework runs a pool of 5 workers (Dask: a LocalCluster of 5 worker processes of one
thread; IPyParallel: a local cluster of 5 engines; mpi4py.futures: an MPIPoolExecutor of 5
spawned workers, as benchmarks/peers.py starts them). One CSV line per measurement on stdout, in
the columns of the framework overhead test (benchmarks/overhead/protocol.py), so that the C++
fiber_overhead's and sleep_floor's lines share the file; the mode names the measurement:

    framework,mode,task_seconds,tasks,workers,seconds,measured_tasks

  apply_async       the overhead test's rounds (the paper's mode): one apply_async per worker
                    sleeping task_seconds, then waiting for all; protocol.run's warm-up, pace,
                    --limit and best of --repeats
  map_chunksize_1   one map of `tasks` empty tasks at chunksize 1 (task_seconds 0)
  map_auto          the same at automatic chunks: the framework's own (fiber, multiprocessing's
                    default chunksize for map), multiprocessing's rule where it has none
  imap_chunksize_1  imap of the chunksize-1 map's tasks, read lazily from an iterator, the results
                    taken one by one; fiber and multiprocessing only (the peers have no lazy map)
  first_pool_start  making the first pool (fiber: with its runtime, MPI_Init), and its first map
  first_pool_map    of one empty task per worker (fiber: spawn to first task, with the two rows)
  second_pool_start the same for a pool made after the first was terminated (fiber's takes the
  second_pool_map   first one's parked workers); fiber and multiprocessing only, the others start
                    a cluster once
  array_M_MB        one task whose argument and result is a float64 array of M MB (--megabytes)

The framework name is the module's, "fiber-python" for fiber (the C++ program's lines are
"fiber" and "fiber-inline"). Run it with /usr/bin/python3: the peers are Debian's packages.
"""

import argparse
import contextlib
import logging
import math
import os
import py_compile
import sys
import time
import warnings

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "overhead"), os.path.join(here, "..")]
import peers  # noqa: E402
import protocol  # noqa: E402  (the overhead test's)
import tasks  # noqa: E402

WORKERS = protocol.WORKERS
FRAMEWORK_NAMES = {"fiber": "fiber-python"}
# Empty tasks per map (chunksize 1, automatic chunks), chosen so that each map takes roughly
# 0.3-2 s here; --quick: a tenth. The same for fiber and multiprocessing, whose ratio is a target.
MAP_TASKS = {"fiber": (50_000, 2_000_000), "multiprocessing": (50_000, 2_000_000),
             "mpi4py.futures": (20_000, 400_000), "ipyparallel": (500, 20_000),
             "dask": (2_000, 20_000)}
QUICK_DIVISOR = 10
WARM_UP_TASKS = 100
# The large-data task's array: 100 MB in a full run; --quick's is smaller.
ARRAY_MEGABYTES = 100
QUICK_ARRAY_MEGABYTES = 20
BYTES_PER_MEGABYTE = 1_000_000
FLOAT64_BYTES = 8
ARRAY_MODE = "array_"  # and the array's megabytes
# Modules whose pools this script makes twice (the second after the first was terminated): the
# others start a cluster, whose start-up is not the pool's.
RESTARTED = ("fiber", "multiprocessing")
# Between the first pool's end and the second's start, as between two stages of a program (not
# back to back): long enough for fiber's parked workers to fork their standby task processes
# (they do once quiet for 10 ms, libfiber/src/worker/supervisor.hpp).
STAGE_PAUSE_SECONDS = 0.2


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", required=True, choices=tuple(MAP_TASKS),
                        help="the framework to measure")
    parser.add_argument("--quick", action="store_true",
                        help="a tenth of the map tasks, a smaller array")
    parser.add_argument("--total", type=float, default=1.0,
                        help="ideal total seconds of each round measurement (default 1)")
    parser.add_argument("--task-seconds", type=float, nargs="+",
                        default=list(protocol.TASK_SECONDS),
                        help="sleep durations of the rounds (default: 1 0.1 0.01 0.001 0.0001)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many (default 3)")
    parser.add_argument("--limit", type=float, default=10.0,
                        help="longest a round measurement may take, in seconds (default 10)")
    parser.add_argument("--megabytes", type=float,
                        help=f"the array's size (default {ARRAY_MEGABYTES}, --quick "
                             f"{QUICK_ARRAY_MEGABYTES})")
    args = parser.parse_args()
    if min(args.total, args.repeats, args.limit, *args.task_seconds) <= 0:
        parser.error("--total, --repeats, --limit and --task-seconds must be positive")
    if args.megabytes is not None and args.megabytes <= 0:
        parser.error("--megabytes must be positive")
    args.modes = ["apply_async"]  # protocol.run's: the paper's mode only
    return args


class Pool:
    """What the measurements call, whatever the framework: rounds of apply_async, maps, and imap
    where the framework has a lazy one (fiber and multiprocessing)."""

    def __init__(self, apply_async, pool_map, pool_imap=None):
        self._apply_async = apply_async  # (function, argument) -> something with get()
        self._map = pool_map  # (function, items, chunksize or None) -> results
        self.imap = None
        if pool_imap is not None:  # (function, iterable, chunksize) -> an iterator of results
            self.imap = lambda function, items, chunksize: list(pool_imap(
                function, iter(items), chunksize))

    def apply_round(self, function, arguments):
        pending = [self._apply_async(function, argument) for argument in arguments]
        return [result.get() for result in pending]

    def map(self, function, items, chunksize):
        return list(self._map(function, items, chunksize))


def automatic_chunksize(tasks_count):
    """multiprocessing.Pool.map's default chunking, for peers without their own."""
    return math.ceil(tasks_count / (4 * WORKERS))


@contextlib.contextmanager
def multiprocessing_like_pool(module):
    """fiber or multiprocessing: the same Pool class and calls."""
    with module.Pool(WORKERS) as pool:
        yield Pool(lambda f, x: pool.apply_async(f, (x,)), pool.map, pool.imap)


class _Result:
    """A future's result through get(), as AsyncResult's."""

    def __init__(self, future):
        self.get = future.result


@contextlib.contextmanager
def mpi4py_pool():
    peers.set_fiber_mpi_defaults(here)
    from mpi4py.futures import MPIPoolExecutor

    with MPIPoolExecutor(max_workers=WORKERS) as executor:
        def pool_map(function, items, chunksize):
            return executor.map(function, items,
                                chunksize=chunksize or automatic_chunksize(len(items)))

        yield Pool(lambda f, x: _Result(executor.submit(f, x)), pool_map)


@contextlib.contextmanager
def ipyparallel_pool():
    with peers.ipyparallel_cluster(WORKERS) as client:
        view = client.load_balanced_view()

        def pool_map(function, items, chunksize):
            return view.map_sync(function, items,
                                 chunksize=chunksize or automatic_chunksize(len(items)))

        yield Pool(view.apply_async, pool_map)


def _run_chunk(function, chunk):
    return [function(item) for item in chunk]


@contextlib.contextmanager
def dask_pool():
    from distributed import Client, LocalCluster

    # Its advice to scatter large arguments first: the array measurement sends one on purpose.
    warnings.filterwarnings("ignore", message="Large object", category=UserWarning)
    cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    with cluster, Client(cluster) as client:
        def pool_map(function, items, chunksize):
            # pure=False: equal arguments (the rounds' sleeps) are separate tasks, not one.
            if chunksize == 1:
                return client.gather(client.map(function, items, pure=False))
            size = chunksize or automatic_chunksize(len(items))
            chunks = [items[start:start + size] for start in range(0, len(items), size)]
            done = client.gather(client.map(_run_chunk, [function] * len(chunks), chunks,
                                            pure=False))
            return [value for chunk in done for value in chunk]

        yield Pool(lambda f, x: _Result(client.submit(f, x, pure=False)), pool_map)


def open_pool(module):
    if module in ("fiber", "multiprocessing"):
        return multiprocessing_like_pool(__import__(module))
    return {"mpi4py.futures": mpi4py_pool, "ipyparallel": ipyparallel_pool,
            "dask": dask_pool}[module]()


def report(framework, mode, task_seconds, tasks_count, seconds, measured=None):
    print(f"{framework},{mode},{task_seconds:g},{tasks_count},{WORKERS},{seconds:.6f},"
          f"{tasks_count if measured is None else measured}", flush=True)
    print(f"{framework:<16} {mode:<17} {tasks_count:9d} {seconds:9.4f} s", file=sys.stderr,
          flush=True)


def timed(function, *arguments):
    start = time.perf_counter()
    value = function(*arguments)
    return time.perf_counter() - start, value


def measure_start(stack, framework, module, which):
    """Makes a pool (`which`: "first" or "second"), entered into `stack`, and times it and its
    first map; returns it."""
    seconds, pool = timed(stack.enter_context, open_pool(module))
    report(framework, f"{which}_pool_start", 0, WORKERS, seconds)
    seconds, results = timed(pool.map, tasks.empty, list(range(WORKERS)), 1)
    if results != list(range(WORKERS)):
        sys.exit(f"{framework}: the first map returned a wrong result")
    report(framework, f"{which}_pool_map", 0, WORKERS, seconds)
    return pool


def measure_maps(framework, pool, sizes, repeats):
    for mode, call, chunksize, count in (("map_chunksize_1", pool.map, 1, sizes[0]),
                                         ("map_auto", pool.map, None, sizes[1]),
                                         ("imap_chunksize_1", pool.imap, 1, sizes[0])):
        if call is None:
            continue
        items = list(range(count))
        call(tasks.empty, list(range(WARM_UP_TASKS)), chunksize)
        best = math.inf
        for _ in range(repeats):
            seconds, results = timed(call, tasks.empty, items, chunksize)
            if results != items:
                sys.exit(f"{framework}: {mode} returned a wrong result")
            best = min(best, seconds)
        report(framework, mode, 0, count, best)


def measure_array(framework, pool, megabytes, repeats):
    import numpy

    array = numpy.arange(int(megabytes * BYTES_PER_MEGABYTE) // FLOAT64_BYTES, dtype=numpy.float64)
    best = math.inf
    for _ in range(repeats):
        seconds, (back,) = timed(pool.map, tasks.same_array, [array], 1)
        if not numpy.array_equal(back, array):
            sys.exit(f"{framework}: the array came back changed")
        best = min(best, seconds)
    report(framework, f"{ARRAY_MODE}{megabytes:g}_MB", 0, 1, best)


def main():
    args = parse_args()
    framework = FRAMEWORK_NAMES.get(args.module, args.module)
    # Every framework's workers import the tasks (and IPyParallel's engines, started with this
    # environment, find them too).
    # ... from their bytecode, as after a user's first run: where Python writes none itself
    # (PYTHONDONTWRITEBYTECODE) every worker would compile the module at its first task.
    py_compile.compile(tasks.__file__, doraise=True)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    sizes = tuple(n // QUICK_DIVISOR if args.quick else n for n in MAP_TASKS[args.module])
    megabytes = args.megabytes or (QUICK_ARRAY_MEGABYTES if args.quick else ARRAY_MEGABYTES)
    which = "first"
    if args.module in RESTARTED:
        with contextlib.ExitStack() as first:  # ended (fiber: its workers parked) before the next
            measure_start(first, framework, args.module, which)
        time.sleep(STAGE_PAUSE_SECONDS)
        which = "second"
    with contextlib.ExitStack() as stack:
        pool = measure_start(stack, framework, args.module, which)
        peers.hang_if_asked(framework)
        protocol.run(framework, args,
                     lambda seconds: pool.apply_round(time.sleep, [seconds] * WORKERS), None)
        measure_maps(framework, pool, sizes, args.repeats)
        measure_array(framework, pool, megabytes, args.repeats)


if __name__ == "__main__":
    main()
