#!/usr/bin/python3
"""The throughput report: fiber against its floor (a plain MPI round trip to a spawned process)
and its peers (multiprocessing.Pool, mpi4py.futures, IPyParallel), from the CSV that
scripts/bench.sh collects; a bar chart of map at chunksize 1.

For each fiber measurement: the time per task (1e6 / tasks per second, in microseconds), that
time over the MPI round trip, and fiber's tasks per second over each peer's for the same mode,
workers and chunksize. Targets, for map at chunksize 1: at most 3 round trips per task (tasks in
the worker process); at least 3x multiprocessing, 20x mpi4py.futures, 200x IPyParallel.

    /usr/bin/python3 report.py throughput.csv [--markdown PATH] [--page PATH] [--plot PATH]
                               [--peer-states PATH]

A missing floor or peer row shows as "-", or as "hung (reason)" or "failed (reason)" when
--peer-states (scripts/bench.sh's throughput_peers.csv) says the peer did not end well.
"""

import os
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

FIELDS = ("framework", "mode", "workers", "chunksize", "tasks", "seconds", "tasks_per_second")
MAX_TIMES_ROUND_TRIP = 3.0  # fiber's time per task at chunksize 1, in MPI round trips
# Peers, their short names and fiber's least ratio of tasks per second at map chunksize 1.
PEERS = (("multiprocessing", "mp", 3.0), ("mpi4py.futures", "mpi4py", 20.0),
         ("ipyparallel", "IPP", 200.0))
MODE_ORDER = {"map": 0, "apply_async": 1}
LEGEND = ("us/task = 1e6 / tasks per second; / MPI RT = fiber's us/task over the MPI round trip; "
          "x peer = fiber's tasks per second over the peer's; targets (ok/MISS) for map at "
          "chunksize 1. 'worker': tasks run in the worker process (Isolation::none, the pool's "
          "own overhead); 'task process': the default pool, tasks in a forked process per worker "
          "so that crashes are contained. auto = fiber's automatic chunks, multiprocessing's "
          "default chunksize, and multiprocessing's rule (len / 4 x workers) for mpi4py.futures "
          "and IPyParallel, which have none. apply_async = rounds of one call per worker, then "
          "waiting for all. Best of 3 each.")


def read_rows(path):
    """The CSV's rows keyed by (framework, mode, workers, chunksize); a later row wins."""
    rows = {}
    for record in report_support.read_csv(path, FIELDS):
        row = {**record}
        for name in ("workers", "chunksize", "tasks"):
            row[name] = int(row[name])
        for name in ("seconds", "tasks_per_second"):
            row[name] = float(row[name])
        rows[(row["framework"], row["mode"], row["workers"], row["chunksize"])] = row
    return rows


def verdict(value, target_met):
    return f"{value:,.2f}" if target_met is None else (
        f"{value:,.2f} {'ok' if target_met else 'MISS'}")


def table(rows, ends, notes):
    """Header lines, column names, table rows and the target tally (met, held); ends and notes:
    the peers that did not end well (report_support.peer_ends)."""
    floor = next((row for key, row in rows.items() if key[:2] == ("mpi", "roundtrip")), None)
    floor_us = 1e6 / floor["tasks_per_second"] if floor else None
    header = [f"MPI round trip (spawned process, 8 bytes): {floor_us:.2f} us "
              f"({floor['tasks_per_second']:,.0f}/s over {floor['tasks']:,} round trips)"
              if floor else "MPI round trip: no mpi,roundtrip row in the CSV"] + notes
    columns = ["tasks run in", "mode", "workers", "chunksize", "fiber tasks/s", "us/task",
               f"/ MPI RT (<= {MAX_TIMES_ROUND_TRIP:g})"]
    for _, short, least in PEERS:
        columns += [f"{short} tasks/s", f"x {short} (>= {least:g})"]
    fiber_keys = sorted((key for key in rows if key[0] in ("fiber", "fiber-inline")),
                        key=lambda k: (k[0] != "fiber", MODE_ORDER.get(k[1], 9), k[3] != 1,
                                       k[3], k[2]))
    lines, met, held = [], 0, 0
    for key in fiber_keys:
        fiber = rows[key]
        targeted = fiber["mode"] == "map" and fiber["chunksize"] == 1
        per_task_us = 1e6 / fiber["tasks_per_second"]
        cells = ["worker" if key[0] == "fiber-inline" else "task process", fiber["mode"],
                 str(fiber["workers"]), str(fiber["chunksize"]) if fiber["chunksize"] else "auto",
                 f"{fiber['tasks_per_second']:,.0f}", f"{per_task_us:.2f}"]
        if floor:
            ok = (per_task_us / floor_us <= MAX_TIMES_ROUND_TRIP
                  if targeted and key[0] == "fiber-inline" else None)
            if ok is not None:
                met, held = met + ok, held + 1
            cells.append(verdict(per_task_us / floor_us, ok))
        else:
            cells.append("-")
        for peer_name, _, least in PEERS:
            peer = rows.get((peer_name,) + key[1:])
            if not peer:
                cells += [ends.get(peer_name, "-"), "-"]
                continue
            ratio = fiber["tasks_per_second"] / peer["tasks_per_second"]
            ok = ratio >= least if targeted else None
            if ok is not None:
                met, held = met + ok, held + 1
            cells += [f"{peer['tasks_per_second']:,.0f}", verdict(ratio, ok)]
        lines.append(cells)
    return header, columns, lines, (met, held)


def plain_text(header, columns, lines, tally):
    widths = [max(len(cells[i]) for cells in [columns] + lines) for i in range(len(columns))]

    def line(cells):
        return "  ".join(cell.rjust(width) if i >= 2 else cell.ljust(width)
                         for i, (cell, width) in enumerate(zip(cells, widths))).rstrip()

    out = header + ["", line(columns), line(["-" * width for width in widths])]
    out += [line(cells) for cells in lines]
    out += ["", f"targets met (map, chunksize 1): {tally[0]} of {tally[1]}", ""]
    out += textwrap.wrap(LEGEND, 100)
    return "\n".join(out) + "\n"


def markdown_text(header, columns, lines, tally):
    return ("\n".join(f"{text}." for text in header) + "\n\n"
            + report_support.markdown(columns, lines, right_aligned=set(range(2, len(columns))))
            + f"\nTargets met (map, chunksize 1): {tally[0]} of {tally[1]}.\n\n{LEGEND}\n")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [("fiber-inline", "fiber (Isolation::none)"), ("fiber", "fiber (task process)")]
    series += [(name, name) for name, _, _ in PEERS]
    series = [(name, label) for name, label in series
              if any(key[0] == name and key[1] == "map" and key[3] == 1 for key in rows)]
    workers = sorted({key[2] for key in rows if key[0] in ("fiber", "fiber-inline")})
    figure, axis = plt.subplots(figsize=(8, 4.8))
    width = 0.8 / max(1, len(series))
    for i, (name, label) in enumerate(series):
        values = [rows.get((name, "map", w, 1), {}).get("tasks_per_second", 0) for w in workers]
        positions = [x + (i - (len(series) - 1) / 2) * width for x in range(len(workers))]
        axis.bar(positions, values, width, label=label)
    floor = next((row for key, row in rows.items() if key[:2] == ("mpi", "roundtrip")), None)
    if floor:
        axis.axhline(floor["tasks_per_second"], color="black", linestyle="--", linewidth=0.8,
                     label="MPI round trips/s (floor)")
    axis.set_xticks(range(len(workers)), [str(w) for w in workers])
    axis.set_yscale("log")
    axis.set_xlabel("workers")
    axis.set_ylabel("empty tasks per second (log scale)")
    axis.set_title("Throughput of empty tasks, map at chunksize 1 (scripts/bench.sh)")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    args = report_support.arguments(__doc__.splitlines()[0], peers=True)
    rows = read_rows(args.csv)
    header, columns, lines, tally = table(rows, *report_support.peer_ends(args.peer_states))
    sys.stdout.write(plain_text(header, columns, lines, tally))
    text = markdown_text(header, columns, lines, tally)
    report_support.publish(args, "Throughput of empty tasks", "throughput", text)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
