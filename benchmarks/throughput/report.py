#!/usr/bin/python3
"""The throughput report: fiber against its floor (a plain MPI round trip) and its peer
(Python's multiprocessing.Pool), from the CSV that scripts/bench.sh collects.

For each fiber measurement: the time per task (1e6 / tasks per second, in microseconds), that
time over the MPI round trip (target: at most 3 for map at chunksize 1), and fiber's tasks per second over
multiprocessing's for the same mode, workers and chunksize (target: at least 3, likewise).

    /usr/bin/python3 report.py benchmarks/results/throughput.csv [--markdown throughput.md]
        [--readme README.md]

Standard library only. A missing floor or peer row shows as "-".
"""

import argparse
import csv
import sys
import textwrap

FIELDS = ("framework", "mode", "workers", "chunksize", "tasks", "seconds", "tasks_per_second")
MAX_TIMES_ROUND_TRIP = 3.0  # fiber's time per task at chunksize 1, in MPI round trips
MIN_TIMES_MULTIPROCESSING = 3.0  # fiber's tasks/s at chunksize 1 over multiprocessing's
MODE_ORDER = {"map": 0, "apply_async": 1}

COLUMNS = ("tasks run in", "mode", "workers", "chunksize", "tasks", "fiber tasks/s", "fiber us/task",
           f"/ MPI RT (<= {MAX_TIMES_ROUND_TRIP:g})", "mp tasks/s", "mp us/task",
           f"fiber / mp (>= {MIN_TIMES_MULTIPROCESSING:g})")
LEGEND = ("us/task = 1e6 / tasks per second; / MPI RT = fiber us/task over the MPI round trip; "
          "mp = multiprocessing.Pool; fiber / mp = ratio of tasks per second; targets hold for "
          "map at chunksize 1 with tasks in the worker process (Isolation::none); 'task process' is the default pool, whose tasks run in a "
          "forked process per worker so that crashes are contained; "
          "auto = fiber's automatic chunks, multiprocessing's default chunksize; "
          "apply_async = rounds of one call per worker, then get() on all; best of 3 each.")
NUMERIC = {2, 3, 4, 5, 6, 7, 8, 9, 10}  # columns aligned to the right


def read_rows(path):
    """The CSV's rows keyed by (framework, mode, workers, chunksize); a later row wins."""
    rows = {}
    with (sys.stdin if path == "-" else open(path, newline="")) as stream:
        for record in csv.reader(stream):
            if not record or record[0].startswith("#") or record[0] == "framework":
                continue
            if len(record) != len(FIELDS):
                sys.exit(f"report.py: expected {len(FIELDS)} fields, got {record}")
            row = dict(zip(FIELDS, record))
            for name in ("workers", "chunksize", "tasks"):
                row[name] = int(row[name])
            for name in ("seconds", "tasks_per_second"):
                row[name] = float(row[name])
            rows[(row["framework"], row["mode"], row["workers"], row["chunksize"])] = row
    return rows


def verdict(value, target_met):
    """The ratio, marked when it is held against a target."""
    if target_met is None:
        return f"{value:.2f}"
    return f"{value:.2f} {'ok' if target_met else 'MISS'}"


def table(rows):
    """The report's header lines, table rows (lists of strings) and target tally."""
    floor = next((row for key, row in rows.items() if key[:2] == ("mpi", "roundtrip")), None)
    floor_us = 1e6 / floor["tasks_per_second"] if floor else None
    header = []
    if floor:
        header.append(f"MPI round trip (spawned process, 8 bytes): {floor_us:.2f} us "
                      f"({floor['tasks_per_second']:,.0f}/s over {floor['tasks']:,} round trips)")
    else:
        header.append("MPI round trip: no mpi,roundtrip row in the CSV")

    # fiber-inline: Isolation::none, tasks in the worker process (the pool's own overhead, which
    # the targets are about); fiber: the default, tasks in each worker's task process.
    fiber_keys = sorted((key for key in rows if key[0] in ("fiber-inline", "fiber")),
                        key=lambda k: (k[0] != "fiber-inline", MODE_ORDER.get(k[1], 9), k[1],
                                       k[3] != 1, k[3], k[2]))
    lines, met, held = [], 0, 0
    for key in fiber_keys:
        fiber = rows[key]
        peer = rows.get(("multiprocessing",) + key[1:])
        per_task_us = 1e6 / fiber["tasks_per_second"]
        # The targets are for Pool.map at chunksize 1; apply_async rounds wait for their results
        # each time (a full round trip plus thread hand-offs per round), shown for information.
        single = (fiber["chunksize"] == 1 and fiber["mode"] == "map"
                  and key[0] == "fiber-inline")
        cells = ["worker" if key[0] == "fiber-inline" else "task process", fiber["mode"],
                 str(fiber["workers"]),
                 str(fiber["chunksize"]) if fiber["chunksize"] else "auto", f"{fiber['tasks']:,}",
                 f"{fiber['tasks_per_second']:,.0f}", f"{per_task_us:.2f}"]
        if floor and single:
            ok = per_task_us / floor_us <= MAX_TIMES_ROUND_TRIP
            met, held = met + ok, held + 1
            cells.append(verdict(per_task_us / floor_us, ok))
        elif floor:
            cells.append(verdict(per_task_us / floor_us, None))
        else:
            cells.append("-")
        if peer:
            ratio = fiber["tasks_per_second"] / peer["tasks_per_second"]
            ok = ratio >= MIN_TIMES_MULTIPROCESSING if single else None
            if ok is not None:
                met, held = met + ok, held + 1
            cells += [f"{peer['tasks_per_second']:,.0f}", f"{1e6 / peer['tasks_per_second']:.2f}",
                      verdict(ratio, ok)]
        else:
            cells += ["-", "-", "-"]
        lines.append(cells)
    return header, lines, (met, held)


def plain_text(header, lines, tally):
    widths = [max(len(cells[i]) for cells in [list(COLUMNS)] + lines) for i in range(len(COLUMNS))]

    def line(cells):
        return "  ".join(cell.rjust(width) if i in NUMERIC else cell.ljust(width)
                         for i, (cell, width) in enumerate(zip(cells, widths))).rstrip()

    out = header + [""] + [line(COLUMNS), line(["-" * width for width in widths])]
    out += [line(cells) for cells in lines]
    out += ["", f"targets met (map, chunksize 1, tasks in the worker): {tally[0]} of {tally[1]}"]
    out += [""] + textwrap.wrap(LEGEND, 100)
    return "\n".join(out) + "\n"


def markdown_table(header, lines, tally):
    """The results as Markdown without a title: for throughput.md and the README."""
    out = [f"{text}." for text in header] + [""]
    out.append("| " + " | ".join(COLUMNS) + " |")
    out.append("|" + "|".join("---:" if i in NUMERIC else "---" for i in range(len(COLUMNS))) + "|")
    out += ["| " + " | ".join(cells) + " |" for cells in lines]
    out += ["", f"Targets met (map, chunksize 1, tasks in the worker): {tally[0]} of {tally[1]}.", "", LEGEND]
    return "\n".join(out) + "\n"


README_BEGIN = "<!-- throughput table: written by scripts/bench.sh -->"
README_END = "<!-- end of throughput table -->"


def update_readme(path, table_text):
    """Replaces the text between the README's throughput markers with the new table."""
    with open(path) as readme:
        text = readme.read()
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        sys.exit(f"report.py: {path} has no throughput markers ({README_BEGIN} ... {README_END})")
    text = text[:begin + len(README_BEGIN)] + "\n" + table_text + text[end:]
    with open(path, "w") as readme:
        readme.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="the combined CSV ('-' for standard input)")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown")
    parser.add_argument("--readme", metavar="PATH",
                        help="also put the Markdown table into this README, between its markers")
    args = parser.parse_args()
    header, lines, tally = table(read_rows(args.csv))
    sys.stdout.write(plain_text(header, lines, tally))
    table_text = markdown_table(header, lines, tally)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write("# Throughput of empty tasks\n\n" + table_text)
    if args.readme:
        update_readme(args.readme, table_text)


if __name__ == "__main__":
    main()
