"""What the benchmark reports share: the README's tables between markers, and CSV reading.

Each table sits between `<!-- NAME table: written by scripts/bench.sh -->` and
`<!-- end of NAME table -->` in the README.
"""

import csv
import sys


def update_readme(path, name, text):
    """Replaces the text between the README's markers for `name` with `text`."""
    begin_marker = f"<!-- {name} table: written by scripts/bench.sh -->"
    end_marker = f"<!-- end of {name} table -->"
    with open(path) as readme:
        content = readme.read()
    begin, end = content.find(begin_marker), content.find(end_marker)
    if begin < 0 or end < begin:
        sys.exit(f"report: {path} has no {name} markers ({begin_marker} ... {end_marker})")
    content = content[:begin + len(begin_marker)] + "\n" + text + content[end:]
    with open(path, "w") as readme:
        readme.write(content)


def read_csv(path, fields):
    """The rows of a CSV with a header naming at least `fields`, as dicts."""
    with open(path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    if rows and not set(fields) <= set(rows[0]):
        sys.exit(f"report: {path} lacks columns {sorted(set(fields) - set(rows[0]))}")
    return rows


def markdown(header, lines, right_aligned=()):
    """A Markdown table; columns whose index is in right_aligned are aligned to the right."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if i in right_aligned else "---" for i in range(len(header)))
           + "|"]
    out += ["| " + " | ".join(cells) + " |" for cells in lines]
    return "\n".join(out) + "\n"
