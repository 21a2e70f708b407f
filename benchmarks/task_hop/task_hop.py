#!/usr/bin/python3
"""Where the default pool's per-task time goes in the hop between a worker and its task process:
task_hop (empty tasks at chunksize 1, one worker, tasks in the worker and in its task process,
kernel counters per task) interleaved with mpi_roundtrip (the MPI round trip to a spawned
process), best of --runs each, in one invocation; a Markdown table of both isolations, the hop
(their difference) and the ratios to the round trip on stdout.

    /usr/bin/python3 task_hop.py BUILD_DIR [--tasks N] [--runs N] [--syscalls] [--csv PATH]

--syscalls: one more run of task_hop under perf stat for the system calls by name (perf
attached slows the run; its wall time is not used); left out, with a note, where perf is not
installed.
"""

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys

ROLES = ("master", "worker", "task_process")
COUNTERS = (("cpu_us", "CPU us"), ("runqueue_us", "waiting for a core, us"),
            ("timeslices", "times scheduled in"), ("voluntary", "voluntary switches"),
            ("involuntary", "involuntary switches"), ("reads", "read calls"),
            ("writes", "write calls"))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory")
    parser.add_argument("--tasks", type=int, default=100_000, help="tasks (and round trips)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs; best of them")
    parser.add_argument("--syscalls", action="store_true", help="count system calls by name")
    parser.add_argument("--csv", help="also write task_hop's rows of the best runs here")
    args = parser.parse_args()
    if args.tasks <= 0 or args.runs <= 0:
        parser.error("--tasks and --runs must be positive")
    return args


class RunFailed(Exception):
    pass


def run(command):
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RunFailed(f"{os.path.basename(command[0])} exited with {done.returncode}")
    return done.stdout


def round_trip_us(build, count):
    out = run([os.path.join(build, "benchmarks/throughput/mpi_roundtrip"), "--round-trips",
               str(count)])
    fields = out.strip().splitlines()[-1].split(",")  # mpi,roundtrip,1,1,N,seconds,per_second
    return float(fields[5]) * 1e6 / int(fields[4])


def task_hop(build, tasks, syscalls=False):
    """{(isolation, process, counter): per task}."""
    command = [os.path.join(build, "benchmarks/task_hop/task_hop"), "--tasks", str(tasks),
               "--repeats", "1"] + (["--syscalls"] if syscalls else [])
    rows = csv.reader(io.StringIO(run(command)))
    return {(isolation, process, counter): float(value)
            for isolation, process, _, counter, value in rows}


def best_by_isolation(runs):
    """For each isolation, the counters of its run with the least wall time; the least of each
    floor."""
    best = {key: min(r[key] for r in runs) for key in runs[0] if key[0] == "floor"}
    for isolation in ("none", "process"):
        chosen = min(runs, key=lambda r: r[(isolation, "all", "wall_us")])
        best.update({key: value for key, value in chosen.items() if key[0] == isolation})
    return best


def table(rows, round_trip):
    wall = {isolation: rows[(isolation, "all", "wall_us")] for isolation in ("none", "process")}
    floor = {key[2]: value for key, value in rows.items() if key[0] == "floor"}
    out = [f"MPI round trip (spawned process, best of the runs): {round_trip:.2f} us; in one "
           f"process, a small pipe write and read: {floor['pipe_write_read_us']:.2f} us, a "
           f"sched_yield: {floor['sched_yield_us']:.2f} us.", "",
           "| per task | in the worker (Isolation::none) | in the task process (default) "
           "| the hop (difference) |", "|---|---:|---:|---:|"]
    out.append(f"| wall time, us | {wall['none']:.2f} | {wall['process']:.2f} | "
               f"{wall['process'] - wall['none']:.2f} |")
    out.append(f"| wall time / MPI round trip | {wall['none'] / round_trip:.2f} | "
               f"{wall['process'] / round_trip:.2f} | {(wall['process'] - wall['none']) / round_trip:.2f} |")
    counters = list(COUNTERS) + sorted({(key[2], key[2].split(":")[1] + " calls (perf)")
                                        for key in rows if key[2].startswith("syscall:")})
    for role in ROLES:
        for counter, label in counters:
            none = rows.get(("none", role, counter), 0.0)
            process = rows.get(("process", role, counter), 0.0)
            if none == 0 and process == 0:
                continue
            out.append(f"| {role}: {label} | {none:.3f} | {process:.3f} | {process - none:.3f} |")
    return "\n".join(out) + "\n"


def main():
    try:
        measure(parse_args())
    except RunFailed as failure:
        sys.exit(f"task_hop.py: {failure}")


def measure(args):
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    round_trips, runs = [], []
    for _ in range(args.runs):
        round_trips.append(round_trip_us(args.build, args.tasks))
        runs.append(task_hop(args.build, args.tasks))
    rows = best_by_isolation(runs)
    note = ""
    if args.syscalls and not shutil.which("perf"):
        note = "\nNo system calls by name: perf is not installed (Debian's linux-perf).\n"
    elif args.syscalls:
        try:
            rows.update({key: value for key, value in task_hop(args.build, args.tasks, True).items()
                         if key[2].startswith("syscall:")})
        except RunFailed as failure:  # the counts by name are missing, not the measured rows
            note = f"\nNo system calls by name: the run under perf failed ({failure}).\n"
            print(f"task_hop.py: {note.strip()}", file=sys.stderr)
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["isolation", "process", "counter", "per_task"])
            writer.writerows([*key, f"{value:.4f}"] for key, value in sorted(rows.items()))
    sys.stdout.write(table(rows, min(round_trips)) + note)


if __name__ == "__main__":
    main()
