"""The framework overhead test of the Fiber paper (its "sleep test"), for the Python peers; the
fiber program benchmarks/overhead/fiber_overhead.cpp follows the same protocol.

5 workers; tasks that sleep for a fixed time (1 s, 100 ms, 10 ms, 1 ms, 100 us), as many as make
the ideal total `--total` seconds (1 s: 5, 50, 500, 5,000 and 50,000 tasks). Two modes:

  apply_async  the paper's: rounds of one apply_async per worker, then wait for all of them (as
               an RL loop does); tasks / workers rounds
  map          one batch map over all the tasks, each framework's default chunking (as ES does)

Each measurement comes after a short warm-up and is the best of --repeats. A peer too slow to
finish within --limit seconds runs only as many tasks (whole rounds) as fit in that time, by the
warm-up's pace, and its time is scaled up to all tasks: the CSV says how many ran. One line each:

    framework,mode,task_seconds,tasks,workers,seconds,measured_tasks
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peers  # noqa: E402

WORKERS = 5
TASK_SECONDS = (1.0, 0.1, 0.01, 0.001, 0.0001)
WARM_UP_ROUNDS = 10


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--total", type=float, default=1.0,
                        help="ideal total seconds of each measurement (default 1)")
    parser.add_argument("--task-seconds", type=float, nargs="+", default=list(TASK_SECONDS),
                        help="task durations in seconds (default: 1 0.1 0.01 0.001 0.0001)")
    parser.add_argument("--modes", nargs="+", choices=("apply_async", "map"),
                        default=["apply_async", "map"])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many (default 3)")
    parser.add_argument("--limit", type=float, default=10.0,
                        help="longest a measurement may take, in seconds (default 10)")
    args = parser.parse_args()
    if min(args.total, args.repeats, args.limit, *args.task_seconds) <= 0:
        parser.error("--total, --repeats, --limit and --task-seconds must be positive")
    return args


def task_count(total, task_seconds):
    return max(WORKERS, round(total * WORKERS / task_seconds))


def timed(function, *arguments):
    start = time.perf_counter()
    function(*arguments)
    return time.perf_counter() - start


def run(framework, args, apply_round, batch_map):
    """Measures every (mode, task duration) with apply_round(duration) (one round of WORKERS
    apply_async calls, waited for) and batch_map(duration, tasks) (one map over all tasks)."""

    def rounds_of_apply_async(task_seconds, tasks):
        for _ in range(tasks // WORKERS):
            apply_round(task_seconds)

    for mode in args.modes:
        measure = rounds_of_apply_async if mode == "apply_async" else batch_map
        for task_seconds in args.task_seconds:
            tasks = task_count(args.total, task_seconds)
            # The first batch warms up, the second gives the pace.
            warm_up_tasks = min(tasks, WORKERS * WARM_UP_ROUNDS)
            timed(measure, task_seconds, warm_up_tasks)
            peers.hang_if_asked(framework)
            pace = timed(measure, task_seconds, warm_up_tasks) / warm_up_tasks
            measured = min(tasks, max(WORKERS, int(args.limit / pace) // WORKERS * WORKERS))
            best = min(timed(measure, task_seconds, measured) for _ in range(args.repeats))
            seconds = best * tasks / measured
            print(f"{framework},{mode},{task_seconds:g},{tasks},{WORKERS},{seconds:.6f},{measured}",
                  flush=True)
            note = "" if measured == tasks else f" (scaled from {measured} tasks)"
            print(f"{framework:<16} {mode:<11} {task_seconds * 1e3:8.1f} ms x {tasks:6d} tasks "
                  f"{seconds:8.3f} s{note}", file=sys.stderr, flush=True)
