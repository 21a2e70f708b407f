#!/usr/bin/python3
"""Checks that docs/check_docs.py catches drift: on a small repository made for the test, a page
that agrees with its code passes, and each kind of drift (a snippet that is no longer its example
file, an excerpt line gone from its file, a code block without a marker, a script's option or a
path that does not exist, a broken link or anchor, a C++ or Python name that is not declared, a
citation of a heading that is gone) is reported.

    /usr/bin/python3 docs/test_check_docs.py      (CTest: docs_checker_catches_drift)
"""

import subprocess
import sys
import tempfile
from pathlib import Path

CHECKER = Path(__file__).resolve().parent / "check_docs.py"

FILES = {
    "examples/hello.cpp": "#include <fiber/fiber.hpp>\nint main() { fiber::Pool pool; }\n",
    "libfiber/include/fiber/pool.hpp": "namespace fiber {\nclass Pool {};\n}\n",
    "python/fiber/__init__.py": "__all__ = [\n    \"Pool\",\n]\n",
    "scripts/tool.sh": "#!/bin/sh\n# usage: tool.sh [--fast]\n",
    "scripts/bench.sh": "#!/bin/sh\n",
    "docs/guide/benchmarks.md": "# Benchmarks\n",
    "docs/guide/other.md": "# Other\n\n## A section\n",
    "src/code.cpp": "// See docs/guide/other.md \"A section\".\n",
}

GOOD_PAGE = """# Page

<!-- example: examples/hello.cpp -->
```cpp
#include <fiber/fiber.hpp>
int main() { fiber::Pool pool; }
```

<!-- excerpt: examples/hello.cpp -->
```cpp
int main() { fiber::Pool pool; }  // a comment for the reader
```

<!-- not run: needs a cluster -->
```python
import fiber
```

```sh
scripts/tool.sh --fast
```

See [the other page](docs/guide/other.md#a-section), `fiber::Pool` and `fiber.Pool`.
"""

# (what is changed in GOOD_PAGE or a file, what the checker must then say)
DRIFTS = [
    ("int main() { fiber::Pool pool; }\n```\n\n<!-- excerpt",
     "int main() { fiber::Pool pool2; }\n```\n\n<!-- excerpt", "the block is not examples/hello.cpp"),
    ("int main() { fiber::Pool pool; }  // a comment", "int main() { return 0; }  // a comment",
     "of the excerpt is not in examples/hello.cpp"),
    ("<!-- not run: needs a cluster -->\n", "", "a code block without a marker"),
    ("<!-- not run: needs a cluster -->", "<!-- not run: -->", "needs a reason"),
    ("scripts/tool.sh --fast", "scripts/tool.sh --faster", "scripts/tool.sh has no option --faster"),
    ("scripts/tool.sh --fast", "scripts/tools.sh --fast", "scripts/tools.sh: no such file"),
    ("other.md#a-section", "other.md#another-section", "has no heading with the anchor"),
    ("(docs/guide/other.md", "(docs/guide/gone.md", "no such file"),
    ("`fiber::Pool`", "`fiber::Pools`", "fiber::Pools: Pools is not declared"),
    ("`fiber.Pool`", "`fiber.Pools`", "fiber.Pools: not a public name"),
]


def run(root, *arguments):
    done = subprocess.run([sys.executable, str(CHECKER), "--root", str(root), *arguments],
                          capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def make(root, page):
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "page.md").write_text(page)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "good"
        make(root, GOOD_PAGE)
        status, output = run(root, "page.md", "--repository")
        if status != 0:
            failures.append(f"the page that agrees with its code fails:\n{output}")
        for number, (old, new, expected) in enumerate(DRIFTS):
            assert old in GOOD_PAGE, old
            root = Path(scratch) / f"drift{number}"
            make(root, GOOD_PAGE.replace(old, new, 1))
            status, output = run(root, "page.md")
            if status == 0 or expected not in output:
                failures.append(f"{old!r} -> {new!r}: expected a failure saying {expected!r}, "
                                f"got status {status}:\n{output}")
        # A citation of a heading that is gone, in a code comment.
        root = Path(scratch) / "citation"
        make(root, GOOD_PAGE)
        (root / "docs/guide/other.md").write_text("# Other\n\n## Renamed\n")
        status, output = run(root, "--repository")
        if status == 0 or "has no such heading" not in output:
            failures.append(f"a citation of a heading that is gone passes:\n{output}")
    for failure in failures:
        print(f"test_check_docs.py: {failure}")
    print(f"test_check_docs.py: {len(DRIFTS) + 2 - len(failures)} of {len(DRIFTS) + 2} cases as "
          f"expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
