#!/usr/bin/python3
"""The idle workers report: the CSV of idle_workers (one machine and simulated nodes) as a table
of CPU and wake-ups per worker, held, running a task and parked, printed, and optionally written
as Markdown and into docs/guide/benchmarks.md between its idle_workers markers.

    /usr/bin/python3 report.py benchmarks/results/idle_workers.csv [--markdown PATH] [--page PATH]

Standard library only.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

STATES = ("held", "running", "parked")
WHERE = {"master_host": "master's host", "other_hosts": "other hosts"}


def main():
    args = report_support.arguments(__doc__.splitlines()[0], plot=False)
    with open(args.csv) as source:
        rows = list(csv.DictReader(source))
    values = {}
    runs = []  # (nodes, workers) in order
    for row in rows:
        run = (int(row["nodes"]), int(row["workers"]))
        if run not in runs:
            runs.append(run)
        values[(run, row["where"], row["state"], row["measure"])] = float(row["value"])
    table = ["| nodes | workers | where | state | % of a core per worker | wake-ups/s per worker "
             "| machine busy (by the workers) |", "|---:|---:|---|---|---:|---:|---:|"]
    for run in runs:
        for state in STATES:
            busy = values.get((run, "machine", state, "busy_share"))
            by_workers = values.get((run, "machine", state, "workers_busy_share"))
            for where, said in WHERE.items():
                cpu = values.get((run, where, state, "cpu_percent_per_worker"))
                if cpu is None:
                    continue
                wakeups = values[(run, where, state, "wakeups_per_worker_per_second")]
                busy_text = "" if busy is None else f"{100 * busy:.0f} %"
                if by_workers is not None:
                    busy_text += f" ({100 * by_workers:.2f} %)"
                table.append(f"| {run[0]} | {run[1]} | {said} | {state} | {cpu:.3f} | "
                             f"{wakeups:,.1f} | {busy_text} |")
    table += ["", "| nodes | workers | first call after an idle spell, ms | the same call awake, ms |",
              "|---:|---:|---:|---:|"]
    for run in runs:
        first = values.get((run, "all", "held", "first_call_after_idle_ms"))
        awake = values.get((run, "all", "held", "call_while_awake_ms"))
        if first is not None and awake is not None:
            table.append(f"| {run[0]} | {run[1]} | {first:.2f} | {awake:.2f} |")
    text = "\n".join(table) + "\n"
    print(text)
    report_support.publish(args, "Idle workers", "idle_workers", text)


if __name__ == "__main__":
    main()
