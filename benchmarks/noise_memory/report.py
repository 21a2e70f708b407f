#!/usr/bin/python3
"""The noise-table memory report: PSS of the whole job (master, workers, task processes) with a
table shared per node (fiber::NodeArray) or copied per worker, less the same job without a
table, in copies of the table. Target: one copy per node whatever the worker count.

    /usr/bin/python3 report.py noise_memory.csv [--markdown PATH] [--page PATH] [--plot PATH]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

FIELDS = ("table", "workers", "processes", "pss_bytes", "table_bytes")
MiB = 1024 * 1024
MAX_SHARED_COPIES = 1.1  # the target, with room for the pages of the table's bookkeeping


def load(path):
    return {(row["table"], int(row["workers"])): row
            for row in report_support.read_csv(path, FIELDS)}


def copies(rows, kind, workers):
    row, baseline = rows.get((kind, workers)), rows.get(("none", workers))
    if not row or not baseline or float(row["table_bytes"]) == 0:
        return None
    return (float(row["pss_bytes"]) - float(baseline["pss_bytes"])) / float(row["table_bytes"])


def main():
    args = report_support.arguments(__doc__.splitlines()[0])
    rows = load(args.csv)
    workers = sorted({key[1] for key in rows})
    table_mib = max((float(r["table_bytes"]) for r in rows.values()), default=0) / MiB
    header = ["workers", "processes", "PSS, no table (MiB)", "PSS, shared (MiB)",
              "PSS, a copy per worker (MiB)", "shared: copies", "per worker: copies"]
    lines, met, held = [], 0, 0
    for w in workers:
        cells = [str(w), rows.get(("shared", w), rows.get(("none", w)))["processes"]]
        for kind in ("none", "shared", "private"):
            row = rows.get((kind, w))
            cells.append(f"{float(row['pss_bytes']) / MiB:,.1f}" if row else "-")
        shared, private = copies(rows, "shared", w), copies(rows, "private", w)
        if shared is not None:
            ok = shared <= MAX_SHARED_COPIES
            met, held = met + ok, held + 1
            cells.append(f"{shared:.2f} {'ok' if ok else 'MISS'}")
        else:
            cells.append("-")
        cells.append(f"{private:.2f}" if private is not None else "-")
        lines.append(cells)
    text = (report_support.markdown(header, lines, right_aligned=set(range(len(header))))
            + f"\nA table of {table_mib:,.0f} MiB; copies = (PSS with the table - PSS without) / "
            f"table size; target: at most {MAX_SHARED_COPIES:g} copies shared, whatever the "
            f"workers: met {met} of {held}. PSS from /proc/PID/smaps_rollup, summed over the "
            "job's processes.\n")
    print(text)
    report_support.publish(args, "Noise-table memory", "noise memory", text)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axis = plt.subplots(figsize=(7, 4.5))
        for i, (kind, label) in enumerate((("shared", "shared (fiber::NodeArray)"),
                                           ("private", "a copy per worker"))):
            values = [(copies(rows, kind, w) or 0) * table_mib for w in workers]
            axis.bar([x + (i - 0.5) * 0.4 for x in range(len(workers))], values, 0.4, label=label)
        axis.set_xticks(range(len(workers)), [str(w) for w in workers])
        axis.set_xlabel("workers")
        axis.set_ylabel("MiB the table costs the node (PSS)")
        axis.set_title(f"Noise table of {table_mib:,.0f} MiB: memory of the job")
        axis.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
