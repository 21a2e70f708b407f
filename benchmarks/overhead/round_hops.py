#!/usr/bin/python3
"""Where a round of the paper's overhead test spends its time: fiber_overhead's rounds (5 workers,
5 apply_async of a sleep task, then wait for all 5) run with FIBER_HOP_TRACE, which makes the
master, each worker and each task process note the clock as a chunk passes fixed points
(libfiber/src/trace/hop_trace.hpp). Per task duration and isolation, a Markdown table on stdout:
the median and 90th percentile of each hop over all chunks, and of the round, its slowest
chunk's trip and the master's turnaround (from the round's last result to the next round's first
send).

    /usr/bin/python3 round_hops.py BUILD_DIR [--task-seconds S ...] [--total S] [--csv PATH]

The trace adds a clock read and a store per point (tens of nanoseconds, against hops of
microseconds). All processes are on this host, so their clocks are one. A chunk that goes
through a lane (the default pool, workers on the master's host: docs/design.md, "The lane")
passes the points named after its worker in the master, which writes it into the task process's
ring and reads its answer there.
"""

import argparse
import csv
import glob
import os
import statistics
import subprocess
import sys
import tempfile

POINTS = ("master_sent", "worker_received", "worker_forwarded", "task_started", "task_ended",
          "worker_answered", "master_received")
HOPS = (("master -> worker (MPI, until the worker looks)", 0, 1),
        ("worker: queue -> task process ring", 1, 2),
        ("ring -> task process starts the task", 2, 3),
        ("the task (a sleep of the given time)", 3, 4),
        ("task's end -> worker has its answer", 4, 5),
        ("worker -> master (MPI, until the master looks)", 5, 6))
# The program's run: ample for its ideal total of --total seconds per duration.
RUN_TIMEOUT_SECONDS = 300


class RunFailed(Exception):
    pass


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory")
    parser.add_argument("--task-seconds", type=float, nargs="+", default=[0.001, 0.0001],
                        help="task durations")
    parser.add_argument("--total", type=float, default=0.5,
                        help="ideal seconds of each duration's rounds")
    parser.add_argument("--csv", help="also write the rows here")
    args = parser.parse_args()
    if args.total <= 0 or any(s <= 0 for s in args.task_seconds):
        parser.error("--total and --task-seconds must be positive")
    return args


def traced_run(build, task_seconds, total, directory):
    command = [os.path.join(build, "benchmarks/overhead/fiber_overhead"), "--modes", "apply_async",
               "--repeats", "1", "--total", str(total), "--task-seconds", str(task_seconds)]
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=RUN_TIMEOUT_SECONDS,
                              env=dict(os.environ, FIBER_HOP_TRACE=directory))
    except subprocess.TimeoutExpired:
        raise RunFailed(f"fiber_overhead took longer than {RUN_TIMEOUT_SECONDS} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RunFailed(f"fiber_overhead exited with {done.returncode}: {last}")


def read_marks(directory):
    """{chunk: {point: (pid, ns)}}, the first mark of each point."""
    chunks = {}
    for path in glob.glob(os.path.join(directory, "hops-*.csv")):
        with open(path, newline="") as marks:
            for pid, point, chunk, ns in csv.reader(marks):
                chunks.setdefault(int(chunk), {}).setdefault(int(point), (int(pid), int(ns)))
    return chunks


def rounds_of(chunks):
    """The master's rounds: each a list of chunks sent before any of them answered."""
    events = sorted([(m[0][1], 0, c) for c, m in chunks.items()] +
                    [(m[6][1], 6, c) for c, m in chunks.items()])
    rounds, last_point = [], None
    for _, point, chunk in events:
        if point == 0:
            if last_point != 0:
                rounds.append([])
            rounds[-1].append(chunk)
        last_point = point
    return rounds


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summarize(chunks):
    """[(row, median us, p90 us)] of the hops and the rounds."""
    us = lambda ns: ns / 1e3
    rows = []
    for label, start, end in HOPS:
        values = [us(m[end][1] - m[start][1]) for m in chunks.values()]
        rows.append((label, statistics.median(values), percentile(values, 0.9)))
    rounds = rounds_of(chunks)
    whole, slowest, turnaround = [], [], []
    for this, following in zip(rounds, rounds[1:]):
        start = min(chunks[c][0][1] for c in this)
        last = max(this, key=lambda c: chunks[c][6][1])
        next_start = min(chunks[c][0][1] for c in following)
        whole.append(us(next_start - start))
        slowest.append(us(chunks[last][6][1] - chunks[last][0][1]))
        turnaround.append(us(next_start - chunks[last][6][1]))
    for label, values in (("a round, send to next round's send", whole),
                          ("its slowest chunk's trip", slowest),
                          ("the master's turnaround", turnaround)):
        if values:
            rows.append((label, statistics.median(values), percentile(values, 0.9)))
    return rows


def measure(args):
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    tables, csv_rows = [], []
    for task_seconds in args.task_seconds:
        with tempfile.TemporaryDirectory(prefix="fiber-hops-") as directory:
            traced_run(args.build, task_seconds, args.total, directory)
            chunks = {c: m for c, m in read_marks(directory).items() if len(m) == len(POINTS)}
        if not chunks:
            raise RunFailed("the trace holds no whole chunk")
        # Tasks in the worker itself (Isolation::none) start in the process that took them.
        by_isolation = {"process": {}, "none": {}}
        for chunk, marks in chunks.items():
            inline = marks[3][0] == marks[2][0]
            by_isolation["none" if inline else "process"][chunk] = marks
        for isolation, subset in by_isolation.items():
            if not subset:
                continue
            rows = summarize(subset)
            csv_rows += [(task_seconds, isolation, label, f"{median:.1f}", f"{p90:.1f}")
                         for label, median, p90 in rows]
            tables.append(
                f"{task_seconds * 1e3:g} ms tasks, Isolation::{isolation} ({len(subset)} chunks)\n\n"
                "| hop | median us | 90th percentile us |\n|---|---:|---:|\n" +
                "".join(f"| {label} | {median:.1f} | {p90:.1f} |\n" for label, median, p90 in rows))
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["task_seconds", "isolation", "hop", "median_us", "p90_us"])
            writer.writerows(csv_rows)
    sys.stdout.write("\n".join(tables))


def main():
    try:
        measure(parse_args())
    except RunFailed as failure:
        sys.exit(f"round_hops.py: {failure}")


if __name__ == "__main__":
    main()
