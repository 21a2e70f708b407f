"""What the benchmark reports share: their command line, CSV reading, how the peers ended,
Markdown tables, and writing the results to a Markdown file and to the tables of a documentation
page between markers.

Each table sits between `<!-- NAME table: written by scripts/bench.sh -->` and
`<!-- end of NAME table -->` in docs/guide/benchmarks.md.
"""

import argparse
import csv
import sys


def arguments(description, plot=True, peers=False):
    """The command line of a report: its CSV, and where else to write what it finds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("csv", help="the benchmark's CSV (scripts/bench.sh writes it)")
    if peers:
        parser.add_argument("--peer-states", metavar="PATH",
                            help="how each peer ended (NAME_peers.csv of scripts/bench.sh)")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown")
    parser.add_argument("--page", metavar="PATH",
                        help="also put the Markdown table into this page (docs/guide/benchmarks.md), "
                             "between its markers")
    if plot:
        parser.add_argument("--plot", metavar="PATH", help="also draw a PNG")
    return parser.parse_args()


def publish(args, title, name, text):
    """Writes the Markdown `text` to --markdown under the heading `title`, and into the page's
    `name` table with --page."""
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(f"# {title}\n\n" + text)
    if args.page:
        update_page(args.page, name, text)


def update_page(path, name, text):
    """Replaces the text between the page's markers for `name` with `text`."""
    begin_marker = f"<!-- {name} table: written by scripts/bench.sh -->"
    end_marker = f"<!-- end of {name} table -->"
    with open(path) as page:
        content = page.read()
    begin, end = content.find(begin_marker), content.find(end_marker)
    if begin < 0 or end < begin:
        sys.exit(f"report: {path} has no {name} markers ({begin_marker} ... {end_marker})")
    content = content[:begin + len(begin_marker)] + "\n" + text + content[end:]
    with open(path, "w") as page:
        page.write(content)


def read_csv(path, fields):
    """The rows of a CSV with a header naming at least `fields`, as dicts. A line that is not such
    a row (a library's log line on a program's stdout, a cut-short file) ends the report with one
    line that names it."""
    with open(path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    if rows and not set(fields) <= set(rows[0]):
        sys.exit(f"report: {path} lacks columns {sorted(set(fields) - set(rows[0]))}")
    for number, row in enumerate(rows, start=2):
        if None in row or any(row[field] is None for field in fields):
            text = ",".join(value for key, value in row.items()
                            if key is not None and value is not None)
            sys.exit(f"report: {path} line {number} is not a row of {','.join(fields)}: "
                     f"'{text[:120]}'")
    return rows


def peer_ends(path):
    """The peers that did not end well, from the CSV that benchmarks/contained_run.py --states
    writes ({} without one): {framework: "hung (reason)" or "failed (reason)"} for the tables'
    cells, and a note for each, with the last line it wrote."""
    if not path:
        return {}, []
    rows = [row for row in read_csv(path, ("framework", "state", "reason", "last_line"))
            if row["state"] != "ok"]
    ends = {row["framework"]: f"{row['state']} ({row['reason']})" for row in rows}
    notes = [f"{row['framework']}: {row['state']} ({row['reason']})"
             + (f", its last line: '{row['last_line']}'" if row["last_line"] else "")
             for row in rows]
    return ends, [note.replace("|", "/") for note in notes]


def markdown(header, lines, right_aligned=()):
    """A Markdown table; columns whose index is in right_aligned are aligned to the right."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if i in right_aligned else "---" for i in range(len(header)))
           + "|"]
    out += ["| " + " | ".join(cells) + " |" for cells in lines]
    return "\n".join(out) + "\n"
