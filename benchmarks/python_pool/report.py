#!/usr/bin/python3
"""The Python pool report: fiber's Python front end against C++ fiber and the Python peers, from
the CSV that scripts/bench.sh collects (pool_bench.py's lines, fiber_overhead's and sleep_floor's
in the same run); the targets checked; a chart of the rounds and of the empty tasks.

    /usr/bin/python3 report.py python_pool.csv [--markdown PATH] [--page PATH] [--plot PATH]
                               [--peer-states PATH]

Targets: the paper's rounds of apply_async (5 workers) within 1.05x C++ fiber's rounds (its
default pool, tasks in task processes as Python's) at 1 ms tasks and 1.15x at 100 us, and faster
than every peer at 1 ms; empty tasks at chunksize 1 at least 5x multiprocessing's tasks per
second, at automatic chunks at least multiprocessing's (imap's column is measured, with no
target). A peer that --peer-states says did not end well shows as "hung (reason)" or
"failed (reason)" where its rows are missing.
"""

import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")]
import report_support  # noqa: E402

FIELDS = ("framework", "mode", "task_seconds", "tasks", "workers", "seconds", "measured_tasks")
PYTHON_FIBER = "fiber-python"
CPP_FIBER = "fiber"  # fiber_overhead's default pool
PEERS = ("multiprocessing", "mpi4py.futures", "ipyparallel", "dask")
LABELS = {PYTHON_FIBER: "fiber (Python)", CPP_FIBER: "fiber (C++)"}
# Task seconds: Python fiber's largest ratio to C++ fiber's rounds.
ROUND_TARGETS = {0.001: 1.05, 0.0001: 1.15}
# Python fiber's least ratio to multiprocessing's empty tasks per second, by map mode.
MAP_TARGETS = {"map_chunksize_1": 5.0, "map_auto": 1.0}
MAP_MODES = {"map_chunksize_1": "chunksize 1", "map_auto": "automatic chunks",
             "imap_chunksize_1": "imap, chunksize 1"}
START_MODES = ("first_pool_start", "first_pool_map", "second_pool_start", "second_pool_map")
# A parked worker's reuse: the second pool's first map, at most (seconds).
REUSE_TARGET_SECONDS = 0.001
MILLISECONDS = 1e3
ARRAY_MODE, MEGABYTES = "array_", "_MB"  # pool_bench.py's array_M_MB


def duration(seconds):
    return f"{seconds:g} s" if seconds >= 1 else (
        f"{seconds * 1e3:g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:g} us")


def load(path):
    """{(framework, mode, task_seconds): row}; a later row wins."""
    rows = {}
    for row in report_support.read_csv(path, FIELDS):
        if int(row["workers"]) != 5:
            continue
        rows[(row["framework"], row["mode"], float(row["task_seconds"]))] = {
            "seconds": float(row["seconds"]), "tasks": int(row["tasks"]),
            "scaled": int(row["measured_tasks"]) < int(row["tasks"])}
    return rows


def present(rows, ends, frameworks):
    return [f for f in frameworks if f in ends or any(key[0] == f for key in rows)]


def cell(row, reference=None, end="-"):
    if not row:
        return end
    text = f"{row['seconds']:.3f}"
    if reference:
        text += f" ({row['seconds'] / reference['seconds']:.2f}x)"
    return text + ("*" if row["scaled"] else "")


def rounds_table(rows, ends):
    durations = sorted({k[2] for k in rows if k[1] == "apply_async"}, reverse=True)
    frameworks = present(rows, ends, (CPP_FIBER, PYTHON_FIBER) + PEERS)
    header = ["task", "tasks", "floor s"] + [LABELS.get(f, f) for f in frameworks]
    header.append("Python / C++ fiber")
    lines, checks = [], []
    for task in durations:
        floor = rows.get(("floor", "loop", task))
        tasks = next(rows[k]["tasks"] for k in rows if k[1:] == ("apply_async", task))
        cells = [duration(task), f"{tasks:,}", f"{floor['seconds']:.3f}" if floor else "-"]
        cells += [cell(rows.get((f, "apply_async", task)), floor, ends.get(f, "-"))
                  for f in frameworks]
        python = rows.get((PYTHON_FIBER, "apply_async", task))
        cpp = rows.get((CPP_FIBER, "apply_async", task))
        ratio = python["seconds"] / cpp["seconds"] if python and cpp else None
        cells.append(f"{ratio:.3f}" if ratio else "-")
        lines.append(cells)
        if ratio and task in ROUND_TARGETS:
            limit = ROUND_TARGETS[task]
            checks.append((f"fiber (Python), {duration(task)} rounds: {ratio:.3f}x C++ fiber's "
                           f"(target <= {limit:g})", ratio <= limit))
        if python and task == 0.001:
            for peer in PEERS:
                other = rows.get((peer, "apply_async", task))
                if other:
                    checks.append((f"fiber (Python) vs {peer}, 1 ms rounds: the peer "
                                   f"{other['seconds'] / python['seconds']:.2f}x slower "
                                   "(target > 1)", other["seconds"] > python["seconds"]))
    return report_support.markdown(header, lines, set(range(1, len(header)))), checks


def maps_table(rows, ends):
    frameworks = present(rows, ends, (PYTHON_FIBER,) + PEERS)
    header = ["framework"]
    for mode in MAP_MODES.values():
        header += [f"{mode}: tasks", "tasks/s", "x multiprocessing"]
    lines, checks = [], []
    for framework in frameworks:
        cells = [LABELS.get(framework, framework)]
        for mode in MAP_MODES:
            row = rows.get((framework, mode, 0.0))
            reference = rows.get(("multiprocessing", mode, 0.0))
            if not row:
                cells += [ends.get(framework, "-"), "-", "-"]
                continue
            rate = row["tasks"] / row["seconds"]
            ratio = rate / (reference["tasks"] / reference["seconds"]) if reference else None
            cells += [f"{row['tasks']:,}", f"{rate:,.0f}", f"{ratio:.2f}" if ratio else "-"]
            if framework == PYTHON_FIBER and ratio and mode in MAP_TARGETS:
                least = MAP_TARGETS[mode]
                checks.append((f"fiber (Python), empty tasks at {MAP_MODES[mode]}: {ratio:.2f}x "
                               f"multiprocessing's tasks/s (target >= {least:g})",
                               ratio >= least))
        lines.append(cells)
    return report_support.markdown(header, lines, set(range(1, len(header)))), checks


def start_table(rows):
    frameworks = [f for f in (PYTHON_FIBER, "multiprocessing")
                  if any(k[:2] == (f, START_MODES[0]) for k in rows)]
    header = ["framework", "first pool made ms", "its first map ms", "second pool made ms",
              "its first map ms"]
    lines, checks = [], []
    for framework in frameworks:
        cells = [LABELS.get(framework, framework)]
        for mode in START_MODES:
            row = rows.get((framework, mode, 0.0))
            cells.append(f"{row['seconds'] * MILLISECONDS:.1f}" if row else "-")
        lines.append(cells)
    first = rows.get((PYTHON_FIBER, "first_pool_start", 0.0))
    first_map = rows.get((PYTHON_FIBER, "first_pool_map", 0.0))
    second_map = rows.get((PYTHON_FIBER, "second_pool_map", 0.0))
    if first and first_map:
        checks.append((f"fiber (Python), a worker's start-up (spawn to first task, 5 workers, "
                       f"the runtime's start included): "
                       f"{(first['seconds'] + first_map['seconds']) * MILLISECONDS:.0f} ms", None))
    if second_map:
        checks.append((f"fiber (Python), parked workers reused: the second pool's first map "
                       f"{second_map['seconds'] * MILLISECONDS:.1f} ms (target < "
                       f"{REUSE_TARGET_SECONDS * MILLISECONDS:g} ms)",
                       second_map["seconds"] < REUSE_TARGET_SECONDS))
    return report_support.markdown(header, lines, set(range(1, len(header)))), checks


def array_table(rows, ends):
    frameworks = present(rows, ends, (PYTHON_FIBER,) + PEERS)
    header = ["framework", "array MB", "round trip s", "MB/s (there and back)", "x multiprocessing"]
    arrays = {k[0]: (float(k[1][len(ARRAY_MODE):-len(MEGABYTES)]), row)
              for k, row in rows.items() if k[1].startswith(ARRAY_MODE)}
    reference = arrays.get("multiprocessing")
    lines = []
    for framework in frameworks:
        if framework not in arrays:
            lines.append([LABELS.get(framework, framework), "-", ends.get(framework, "-"), "-",
                          "-"])
            continue
        megabytes, row = arrays[framework]
        ratio = (reference[1]["seconds"] / row["seconds"]
                 if reference and reference[0] == megabytes else None)
        lines.append([LABELS.get(framework, framework), f"{megabytes:g}",
                      f"{row['seconds']:.3f}", f"{2 * megabytes / row['seconds']:,.0f}",
                      f"{ratio:.2f}" if ratio else "-"])
    return report_support.markdown(header, lines, {1, 2, 3, 4})


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frameworks = [f for f in (CPP_FIBER, PYTHON_FIBER) + PEERS if any(k[0] == f for k in rows)]
    durations = sorted({k[2] for k in rows if k[1] == "apply_async"}, reverse=True)
    figure, (rounds, maps) = plt.subplots(1, 2, figsize=(13, 4.8))
    width = 0.8 / max(1, len(frameworks))
    for i, framework in enumerate(frameworks):
        offset = (i - (len(frameworks) - 1) / 2) * width
        ratios = []
        for task in durations:
            row, floor = rows.get((framework, "apply_async", task)), rows.get(("floor", "loop",
                                                                               task))
            ratios.append(row["seconds"] / floor["seconds"] if row and floor else 0)
        rounds.bar([x + offset for x in range(len(durations))], ratios, width,
                   label=LABELS.get(framework, framework))
        rates = [rows[(framework, mode, 0.0)]["tasks"] / rows[(framework, mode, 0.0)]["seconds"]
                 if (framework, mode, 0.0) in rows else 0 for mode in MAP_MODES]
        maps.bar([x + offset for x in range(len(MAP_MODES))], rates, width,
                 label=LABELS.get(framework, framework))
    rounds.set_xticks(range(len(durations)), [duration(d) for d in durations])
    rounds.set_yscale("log")
    rounds.set_ylabel("seconds over the floor (log scale)")
    rounds.set_title("rounds of 5 apply_async (the paper's mode)")
    maps.set_xticks(range(len(MAP_MODES)), list(MAP_MODES.values()))
    maps.set_yscale("log")
    maps.set_ylabel("empty tasks per second (log scale)")
    maps.set_title("map of empty tasks, 5 workers")
    maps.legend(fontsize=8)
    figure.suptitle("fiber's Python front end against C++ fiber and the peers (scripts/bench.sh)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    args = report_support.arguments(__doc__.splitlines()[0], peers=True)
    rows = load(args.csv)
    ends, end_notes = report_support.peer_ends(args.peer_states)
    rounds, round_checks = rounds_table(rows, ends)
    maps, map_checks = maps_table(rows, ends)
    starts, start_checks = start_table(rows)
    arrays = array_table(rows, ends)
    notes = [f"- {note}" for note in end_notes]
    notes += [f"- {'ok: ' if met else 'MISS: ' if met is False else ''}{text}"
              for text, met in round_checks + map_checks + start_checks]
    text = ("Rounds of apply_async, 5 workers, tasks that sleep (seconds for all tasks; in "
            "brackets, over the floor: one worker's share of the sleeps looped in one "
            "process, same run; * : timed on fewer rounds within the time limit and scaled up):"
            "\n\n" + rounds + "\nA map of empty tasks, 5 workers (automatic chunks: each "
            "framework's own, multiprocessing's rule len / (4 x workers) for the peers without "
            "one; imap: the chunksize-1 map's tasks from an iterator, its results taken one by "
            "one, fiber and multiprocessing only; best of the repeats):\n\n" + maps + "\nPools made and their first map of one "
            "empty task per worker (the second pool made 0.2 s after the first was terminated, "
            "as at a program's next stage: fiber's takes its parked workers, whose standby task "
            "processes are forked by then; its first map imports the tasks' module in them):"
            "\n\n" + starts + "\nOne task whose argument and "
            "result is a float64 array (pool_bench.py --megabytes):\n\n" + arrays + "\n"
            + "\n".join(notes) + "\n")
    print(text)
    report_support.publish(args, "fiber's Python front end against the peers", "python_pool",
                           text)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
