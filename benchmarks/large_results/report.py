#!/usr/bin/python3
"""The large-results report: MB/s of 100 MB results from workers to the master with fiber's
default UCX transports (every one but CMA) against UCX_TLS=all (CMA in), each as the median of
its runs, and their ratio (above 1: fiber's default is faster).

    /usr/bin/python3 report.py large_results.csv [--markdown PATH]
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

FIELDS = ("transports", "isolation", "workers", "megabytes", "results", "seconds",
          "megabytes_per_second")
DEFAULT, WITH_CMA = "^cma", "all"  # UCX_TLS: fiber's default (launch_defaults.cpp), all


def main():
    args = report_support.arguments(__doc__.splitlines()[0], plot=False)
    rates = {}
    for row in report_support.read_csv(args.csv, FIELDS):
        key = (row["isolation"], row["transports"])
        rates.setdefault(key, []).append(float(row["megabytes_per_second"]))
    lines = []
    for isolation in sorted({key[0] for key in rates}):
        default = rates.get((isolation, DEFAULT))
        with_cma = rates.get((isolation, WITH_CMA))
        if not default or not with_cma:
            continue
        a, b = statistics.median(default), statistics.median(with_cma)
        lines.append([isolation, f"{a:.0f}", f"{b:.0f}", f"{a / b:.2f}x", str(len(default))])
    header = ["tasks run in", "fiber default, MB/s", "UCX_TLS=all, MB/s", "ratio", "runs"]
    report_support.publish(args, "Large results: fiber's UCX transports against CMA",
                           "large_results",
                           report_support.markdown(header, lines, right_aligned=(1, 2, 3, 4)))


if __name__ == "__main__":
    main()
