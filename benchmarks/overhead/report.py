#!/usr/bin/python3
"""The framework overhead report: total seconds per (framework, mode, task duration) from the CSV
that scripts/bench.sh collects, each over the sleep floor measured in the same run; the targets
checked; a bar chart in the style of the Fiber paper's figure.

    /usr/bin/python3 report.py overhead.csv [--markdown PATH] [--page PATH] [--plot PATH]
                               [--peer-states PATH]

A peer that --peer-states (scripts/bench.sh's overhead_peers.csv) says did not end well shows as
"hung (reason)" or "failed (reason)" where its rows are missing.

Targets (the paper's mode, apply_async rounds): fiber within 5 % of the floor at 1 ms tasks and
faster than every peer; within 20 % at 100 us. Beside the floor (sleeps looped in one process),
the paper's mode with no framework: floor-rounds (5 threads, a barrier per round), what of a
ratio to the floor the protocol itself costs on this machine, and mpi-rounds (5 spawned MPI
processes, plain MPI with fiber's launch defaults), what MPI processes add to that; fiber's own
cost is its ratio over mpi-rounds. lane-rounds: the default pool's processes (each spawned
process forks a task process) with the master reaching the task processes through shared memory
and the spawned processes off the round's path: what that structure allows.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

FIELDS = ("framework", "mode", "task_seconds", "tasks", "workers", "seconds", "measured_tasks")
PEERS = ("multiprocessing", "ipyparallel", "mpi4py.futures")
FRAMEWORKS = ("floor-rounds", "mpi-rounds", "lane-rounds", "fiber", "fiber-inline") + PEERS
LABELS = {"fiber": "fiber (task process)", "fiber-inline": "fiber (Isolation::none)",
          "floor": "floor (sleeps in a loop)", "floor-rounds": "no framework (threads, barrier)",
          "mpi-rounds": "no framework (plain MPI processes)",
          "lane-rounds": "no framework (task processes over shared memory)"}
MODES = ("apply_async", "map")
WORKERS = 5  # the paper's
TARGETS = {0.001: 1.05, 0.0001: 1.20}  # task seconds: fiber's largest ratio to the floor
# Read off the paper's figure (seconds, ideal 1), apply_async rounds: multiprocessing, Fiber,
# IPyParallel.
PAPER = {1.0: (1.0, 1.0, 1.0), 0.1: (1.0, 1.0, 1.2), 0.01: (1.2, 1.2, 3.2),
         0.001: (1.9, 1.9, 46.7)}


def duration(seconds):
    return f"{seconds:g} s" if seconds >= 1 else (
        f"{seconds * 1e3:g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:g} us")


def load(path):
    rows = {}
    for row in report_support.read_csv(path, FIELDS):
        framework = row["framework"]
        if int(row["workers"]) != WORKERS:  # fiber_overhead --workers N: "fiber@N"
            framework += f"@{row['workers']}"
        key = (framework, row["mode"], float(row["task_seconds"]))
        rows[key] = {"seconds": float(row["seconds"]),
                     "scaled": int(row["measured_tasks"]) < int(row["tasks"]),
                     "tasks": int(row["tasks"])}
    return rows


def build_table(rows, ends):
    """Markdown lines and the target checks [(text, met)]; ends: the peers that did not end well,
    {framework: "hung (reason)"}."""
    durations = sorted({key[2] for key in rows}, reverse=True)
    present = [f for f in FRAMEWORKS if f in ends or any(key[0] == f for key in rows)]
    header = ["mode", "task", "tasks", "floor s"] + [LABELS.get(f, f) for f in present]
    lines, checks = [], []
    for mode in MODES:
        for task in durations:
            floor = rows.get(("floor", "loop", task))
            cells = [mode, duration(task)]
            tasks = next((rows[k]["tasks"] for k in rows if k[1:] == (mode, task)), None)
            if tasks is None:
                continue
            cells += [f"{tasks:,}", f"{floor['seconds']:.3f}" if floor else "-"]
            for framework in present:
                row = rows.get((framework, mode, task))
                if not row:
                    cells.append(ends.get(framework, "-"))
                    continue
                text = f"{row['seconds']:.3f}"
                if floor:
                    text += f" ({row['seconds'] / floor['seconds']:.2f}x)"
                if row["scaled"]:
                    text += "*"
                cells.append(text)
            lines.append(cells)
            if mode == "apply_async" and task in TARGETS and floor:
                checks += target_checks(rows, task, floor["seconds"])
    return header, lines, checks


def target_checks(rows, task, floor):
    checks = []
    limit = TARGETS[task]
    mpi = rows.get(("mpi-rounds", "apply_async", task))
    threads = rows.get(("floor-rounds", "apply_async", task))
    lane = rows.get(("lane-rounds", "apply_async", task))
    if threads or mpi:  # not targets: what the machine allows any framework
        parts = [f"{name} {row['seconds'] / floor:.3f}x"
                 for name, row in (("threads", threads), ("plain MPI processes", mpi),
                                   ("task processes over shared memory", lane)) if row]
        checks.append((f"for reference, {duration(task)} tasks with no framework: "
                       f"{', '.join(parts)} the floor (the target for fiber: <= {limit:g})", None))
    for framework in ("fiber", "fiber-inline"):
        row = rows.get((framework, "apply_async", task))
        if not row:
            continue
        ratio = row["seconds"] / floor
        over_mpi = (f"; {row['seconds'] / mpi['seconds']:.3f}x plain MPI's rounds"
                    if mpi else "")
        checks.append((f"{LABELS[framework]}, {duration(task)} tasks: {ratio:.3f}x the floor "
                       f"(target <= {limit:g}){over_mpi}", ratio <= limit))
        if task == 0.001:
            for peer in PEERS:
                other = rows.get((peer, "apply_async", task))
                if other:
                    checks.append((f"{LABELS[framework]} vs {peer}, 1 ms tasks: peer "
                                   f"{other['seconds'] / row['seconds']:.2f}x slower (target > 1)",
                                   other["seconds"] > row["seconds"]))
    return checks


def fewer_workers(rows):
    """Notes on the runs with fewer workers than the paper's 5 (fiber_overhead and mpi_rounds
    --workers)."""
    notes = []
    for key in sorted(k for k in rows if "@" in k[0] and k[1] == "apply_async"):
        framework, workers = key[0].split("@")
        floor = rows.get(("floor", "loop", key[2]))
        if floor:
            notes.append(f"- {LABELS.get(framework, framework)}, {workers} worker(s), "
                         f"{duration(key[2])} tasks: {rows[key]['seconds'] / floor['seconds']:.3f}x "
                         "the floor")
    return notes


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    durations = sorted({key[2] for key in rows}, reverse=True)
    series = [f for f in ("floor",) + FRAMEWORKS if any(key[0] == f for key in rows)]
    figure, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    width = 0.8 / len(series)
    for axis, mode in zip(axes, MODES):
        for i, framework in enumerate(series):
            key_mode = "loop" if framework == "floor" else mode
            values = [rows.get((framework, key_mode, d), {}).get("seconds", 0) for d in durations]
            positions = [x + (i - (len(series) - 1) / 2) * width for x in range(len(durations))]
            axis.bar(positions, values, width, label=LABELS.get(framework, framework))
        axis.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
        axis.set_xticks(range(len(durations)), [duration(d) for d in durations])
        axis.set_yscale("log")
        axis.set_xlabel("task duration")
        axis.set_title("rounds of 5 apply_async (the paper's mode)" if mode == "apply_async"
                       else "one batch map")
    axes[0].set_ylabel("total seconds (ideal 1 s, log scale)")
    axes[1].legend(fontsize=8)
    figure.suptitle("Framework overhead, 5 workers on one machine (scripts/bench.sh)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    args = report_support.arguments(__doc__.splitlines()[0], peers=True)
    rows = load(args.csv)
    ends, end_notes = report_support.peer_ends(args.peer_states)
    header, lines, checks = build_table(rows, ends)
    table = report_support.markdown(header, lines, right_aligned=set(range(2, len(header))))
    notes = [f"- {note}" for note in end_notes]
    notes += [f"- {'ok: ' if met else 'MISS: ' if met is False else ''}{text}"
              for text, met in checks]
    smaller = fewer_workers(rows)
    if smaller:
        notes += ["", f"Rounds of apply_async with fewer workers (with {WORKERS}, the master's "
                  f"two threads and {WORKERS} workers with their task processes share this "
                  f"machine's {os.cpu_count()} cores):"] + smaller
    paper = ", ".join(f"{duration(d)}: {mp:g} / {fb:g} / {ipp:g} s"
                      for d, (mp, fb, ipp) in PAPER.items())
    text = (table + "\n" + "\n".join(notes) + "\n\n"
            "Seconds for all tasks (ideal 1 s); in brackets, over the floor (one worker's share "
            "of the sleeps looped in one process, same run); no framework: the paper's mode "
            "run by 5 threads of one process that sleep and meet at a barrier each round (the "
            "protocol's own cost), and by 5 spawned MPI processes that a master sends each "
            "round's sleeps to over plain MPI with fiber's launch defaults (what MPI processes "
            "cost on this machine; the rest of fiber's time is fiber's), and by the same "
            "spawned processes each with a forked task process that the master reaches through "
            "shared memory (what the default pool's processes cost with no relay through the "
            "worker). * : too slow to finish in the time limit; timed on fewer rounds and "
            "scaled up. The paper (multiprocessing / Fiber / "
            f"IPyParallel, apply_async rounds): {paper}.\n")
    print(text)
    report_support.publish(args, "Framework overhead (the paper's sleep test)", "overhead",
                           text)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
