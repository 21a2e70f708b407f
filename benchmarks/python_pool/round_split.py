#!/usr/bin/python3
"""Where a Python round of the paper's overhead test spends its time: rounds of 5 apply_async of
time.sleep, then 5 get, from Python (import fiber), run with FIBER_HOP_TRACE (the hops of each
chunk between the master, its worker and its task process: benchmarks/overhead/round_hops.py),
beside time.monotonic_ns() taken in the round's loop: the same clock as the trace's, so the
caller's Python lies between the trace's points. Per round: from the loop's first apply_async
call to its chunk's send, from the first send to the last, and from the round's last answer to
the loop having every value. A Markdown table of medians and 90th percentiles on stdout, then the
chunks' hops as round_hops.py's table (docs/design.md, "The Python front end": "A round's
Python").

    /usr/bin/python3 round_split.py BUILD_DIR [--task-seconds S] [--rounds N]

No time is asserted; compare runs alternated in the same minute.
"""

import argparse
import bisect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "overhead"))
import round_hops  # noqa: E402

WORKERS = 5
# Rounds before the timed ones: the pool's workers, lanes and caches settle.
WARM_UP_ROUNDS = 200
# The traced child's run: ample for a few thousand rounds of milliseconds.
RUN_TIMEOUT_SECONDS = 300
SPLITS = ("from the first apply_async call to its send", "from the first send to the last",
          "from the last answer to every value in the loop")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory (its python/ holds the package)")
    parser.add_argument("--task-seconds", type=float, default=0.0001, help="each task's sleep")
    parser.add_argument("--rounds", type=int, default=3000, help="timed rounds")
    # The traced run itself: where it writes its loop's times.
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task_seconds <= 0 or args.rounds < 1:
        parser.error("--task-seconds must be positive and --rounds at least 1")
    return args


def run_rounds(task_seconds, rounds, output):
    """In the traced child: the rounds, and (loop start, applies done, gets done) per round."""
    import fiber

    clock = time.monotonic_ns
    loop = []
    with fiber.Pool(WORKERS) as pool:
        for _ in range(WARM_UP_ROUNDS):
            for result in [pool.apply_async(time.sleep, (task_seconds,)) for _ in range(WORKERS)]:
                result.get()
        for _ in range(rounds):
            started = clock()
            pending = [pool.apply_async(time.sleep, (task_seconds,)) for _ in range(WORKERS)]
            applied = clock()
            for result in pending:
                result.get()
            loop.append((started, applied, clock()))
    with open(output, "w") as out:
        json.dump(loop, out)


def traced_run(args, directory):
    loop_path = os.path.join(directory, "loop.json")
    env = dict(os.environ, FIBER_HOP_TRACE=directory,
               PYTHONPATH=os.path.join(os.path.abspath(args.build), "python"))
    command = [sys.executable, os.path.abspath(__file__), args.build, "--task-seconds",
               str(args.task_seconds), "--rounds", str(args.rounds), "--child", loop_path]
    try:
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=RUN_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        sys.exit(f"round_split: the rounds took longer than {RUN_TIMEOUT_SECONDS} s")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        sys.exit(f"round_split: the rounds exited with {done.returncode}: {last}")
    with open(loop_path) as loop_file:
        return json.load(loop_file)


def splits(chunks, loop):
    """{split: [ns per round]} for the rounds whose chunks lie within one pass of the loop."""
    starts = [started for started, _, _ in loop]
    values = {name: [] for name in SPLITS}
    for chunks_of_round in round_hops.rounds_of(chunks):
        first_sent = min(chunks[c][0][1] for c in chunks_of_round)
        last_sent = max(chunks[c][0][1] for c in chunks_of_round)
        last_answer = max(chunks[c][6][1] for c in chunks_of_round)
        index = bisect.bisect_right(starts, first_sent) - 1
        if index < 0:
            continue
        started, applied, got = loop[index]
        if not started <= first_sent <= last_sent <= applied or last_answer > got:
            continue  # not one pass of the loop (its first rounds' chunks, a straggler)
        for name, ns in zip(SPLITS, (first_sent - started, last_sent - first_sent,
                                     got - last_answer)):
            values[name].append(ns)
    return values


def main():
    args = parse_args()
    if args.child:
        run_rounds(args.task_seconds, args.rounds, args.child)
        return
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="fiber-round-split-") as directory:
        loop = traced_run(args, directory)
        chunks = {c: m for c, m in round_hops.read_marks(directory).items()
                  if len(m) == len(round_hops.POINTS)}
    values = splits(chunks, loop)
    if not all(values.values()):
        sys.exit("round_split: no round of the trace lies within one pass of the loop")
    print(f"Python rounds of {WORKERS} apply_async of {args.task_seconds * 1e6:g} us sleeps, "
          f"{len(values[SPLITS[0]])} rounds:\n")
    print("| the caller's part of a round | median us | 90th percentile us |\n|---|---:|---:|")
    for name, ns in values.items():
        us = [v / 1e3 for v in ns]
        print(f"| {name} | {statistics.median(us):.1f} | {round_hops.percentile(us, 0.9):.1f} |")
    print("\n| hop | median us | 90th percentile us |\n|---|---:|---:|")
    for label, median, p90 in round_hops.summarize(chunks):
        print(f"| {label} | {median:.1f} | {p90:.1f} |")


if __name__ == "__main__":
    main()
