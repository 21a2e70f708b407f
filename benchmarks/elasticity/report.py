#!/usr/bin/python3
"""The elasticity report: the CSV of fiber_elasticity as a table, printed, and optionally written
as Markdown and into docs/guide/benchmarks.md between its elasticity markers.

    /usr/bin/python3 report.py benchmarks/results/elasticity.csv [--markdown PATH] [--page PATH]

Standard library only.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

WHAT = {
    "grow_spawned": "grow, workers spawned",
    "grow_unparked": "grow, parked workers taken back",
    "shrink": "shrink (workers parked)",
    "task_crash_recovery": "a task process segfaults: reported, forked again",
    "stage_change_to_wide": "stage change: one-core workers parked, two-core ones at work "
                            "(re-shaped, lending slots; median)",
    "stage_change_to_narrow": "stage change: two-core workers parked, one-core ones at work "
                              "(median)",
}


def describe(measure):
    if measure.startswith("killed_worker_"):
        kind, _, timeout = measure[len("killed_worker_"):].partition("_timeout_")
        action = "noticed" if kind == "detected" else "replaced, its tasks re-sent"
        return f"worker process SIGKILLed, {action} (worker_timeout {timeout})"
    return WHAT.get(measure, measure)


def main():
    args = report_support.arguments(__doc__.splitlines()[0], plot=False)
    with open(args.csv) as source:
        rows = list(csv.DictReader(source))
    lines = [(describe(row["measure"]), row["workers"], f"{float(row['seconds']) * 1e3:,.1f}")
             for row in rows]
    width = max((len(line[0]) for line in lines), default=10)
    for what, workers, ms in lines:
        print(f"{what:<{width}}  {workers:>3} workers  {ms:>9} ms")
    table = ["| what | workers | ms |", "|---|---:|---:|"]
    table += [f"| {what} | {workers} | {ms} |" for what, workers, ms in lines]
    text = "\n".join(table) + "\n"
    report_support.publish(args, "Elasticity and recovery", "elasticity", text)


if __name__ == "__main__":
    main()
