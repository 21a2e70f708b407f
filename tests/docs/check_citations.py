#!/usr/bin/python3
"""Checks that the repository cites its platform facts in docs/platform.md, and only there.

  check_citations.py SOURCE_ROOT

Fails (one line per problem, exit 1) on a citation of the outside notes file or of a numbered
"fact N", and on a citation docs/platform.md, "TITLE" whose TITLE is not a section of that file.
"""
import os
import re
import sys

OUTSIDE_NOTES = "PLATFORM" + ".md"  # spelt in two parts so that this file does not cite it
NUMBERED_FACT = re.compile(r"\bfacts? \d")
# A comment's continuation lines joined: a citation may break across them.
CONTINUATION = re.compile(r"\n[ \t]*(?://|#|\*)?[ \t]*")
CITATION = re.compile(r'docs/platform\.md, "([^"]+)"')
SKIPPED_FOLDERS = {".git", "__pycache__"}
SKIPPED_SUFFIXES = (".h5", ".png", ".csv")


def source_files(root):
    this_file = os.path.realpath(__file__)  # its messages show the citation's form
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in SKIPPED_FOLDERS and not f.startswith("build")]
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(SKIPPED_SUFFIXES) and os.path.realpath(path) != this_file:
                yield path


def main():
    if len(sys.argv) != 2:
        print("usage: check_citations.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = sys.argv[1]
    with open(os.path.join(root, "docs", "platform.md"), encoding="utf-8") as notes:
        titles = set(re.findall(r"^## (.+)$", notes.read(), re.M))
    problems = []
    for path in source_files(root):
        try:
            with open(path, encoding="utf-8") as source:
                text = source.read()
        except (UnicodeDecodeError, OSError):
            continue
        where = os.path.relpath(path, root)
        if OUTSIDE_NOTES in text:
            problems.append(f"{where}: cites {OUTSIDE_NOTES}, which is not in the repository")
        for line_number, line in enumerate(text.splitlines(), 1):
            if NUMBERED_FACT.search(line):
                problems.append(f"{where}:{line_number}: cites a numbered fact: {line.strip()}")
        for title in CITATION.findall(CONTINUATION.sub(" ", text)):
            if title not in titles:
                problems.append(f'{where}: cites docs/platform.md, "{title}", which has no such section')
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
