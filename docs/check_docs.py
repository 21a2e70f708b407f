#!/usr/bin/python3
"""Checks that the documentation cannot drift from the code.

    /usr/bin/python3 docs/check_docs.py [--root DIR] PAGE...     the checks of each page
    /usr/bin/python3 docs/check_docs.py [--root DIR] --repository   the checks across the repository

For each Markdown PAGE (a path relative to the root):

- Every ```cpp, ```python and ```cmake block has, on the line just above it (blank lines
  between allowed), one of:
    <!-- example: PATH -->     the block is the file PATH, character for character;
    <!-- excerpt: PATH -->     every line of the block is a line of PATH, in the same order
                               (indentation, trailing comments and `// ...` lines aside);
    <!-- not run: REASON -->   the block is not run, for the reason given.
- Every repository path named in code (a ```sh block or an inline `code` span), such as
  `scripts/bench.sh` or `apps/es/configs/pendulum.toml`, exists.
- Every option given to one of the repository's programs in a command (`scripts/X.sh --flag`,
  `fiber-es --flag`, `sbatch slurm/es.sbatch --flag`) is one that program defines.
- Every relative link [text](target#anchor) reaches an existing file, and its anchor a heading of
  that file.
- Every C++ name `fiber::X` (or `fiber::X::y`) the page mentions is declared in the code of the
  public headers, the applications or the Python extension, and every Python name `fiber.X` is
  one of the package's public names or modules.

With --repository:

- Every citation of a user page's section in the repository's text files (code comments and
  pages alike), written `docs/guide/rl.md "Data safety"` or `README "Two commands"`, names a
  heading of that page (the heading, or its beginning).
- Every `fiber::X` named in the public headers' comments is declared in their code.
- docs/guide/benchmarks.md has the begin and end markers of each table that scripts/bench.sh has
  a report write there.

Prints one line per problem and exits 1 if there is any. Standard library only.
"""

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

CODE_LANGUAGES = {"cpp", "c++", "python", "cmake"}
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
MARKER = re.compile(r"^\s*<!--\s*(example|excerpt|not run):\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
# A path inside the repository: a top-level folder of it, then a path.
REPOSITORY_PATH = re.compile(
    r"(?<![\w./$-])((?:scripts|slurm|examples|apps|benchmarks|docs|tests|libfiber|python|cmake)"
    r"/[\w./+-]*)")
# Words of a path that stand for something (NAME.csv, runs/es-JOBID/, PATH): not checked.
PLACEHOLDER = re.compile(r"[A-Z]{2,}|\*|\.\.\.|<|\{")
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`([^`\n]+)`")
PAGES_CITED = r"(README(?:\.md)?|docs/guide/[\w-]+\.md)"
CITATION = re.compile(PAGES_CITED + r"(?:'s)?,? \"([^\"]+)\"")
# Not in quotes: "fiber::UnknownTask" is a TaskError's type() string, not a C++ name.
CPP_NAME = re.compile(r"(?<!\")\bfiber::((?:[A-Za-z_]\w*)(?:::[A-Za-z_]\w*)*)")
PYTHON_NAME = re.compile(r"(?<![\w/.-])fiber\.([A-Za-z_]\w*)(?!\w)")
FILE_SUFFIXES = {"hpp", "cpp", "py", "md", "h5", "png", "csv", "toml"}
OPTION = re.compile(r"--[A-Za-z][\w-]*")
# Scripts that pass their arguments on: to a program of the repository (whose options they are),
# or to a tool (None: not checked).
ANY = frozenset()  # the options of a program that are not checked
FORWARDS = {"scripts/run.sh": "fiber-es", "scripts/build.sh": None, "scripts/test.sh": None}


def prose_lines(lines):
    """(number, line) of each line of a page outside its fenced code blocks."""
    inside = False
    for number, line in enumerate(lines, start=1):
        if FENCE.match(line) or line.strip() == "```":
            inside = not inside
            continue
        if not inside:
            yield number, line


class Checker:
    def __init__(self, root):
        self.root = Path(root).resolve()
        self.problems = []
        self._options = {}

    def problem(self, where, text):
        self.problems.append(f"{where}: {text}")

    # ------------------------------------------------------------------ a page

    def check_page(self, page):
        path = self.root / page
        if not path.is_file():
            self.problem(page, "no such page")
            return
        lines = path.read_text().split("\n")
        self.check_blocks(page, lines)
        self.check_inline_code(page, lines)
        self.check_links(page, lines)
        self.check_names(page, lines)

    def blocks(self, lines):
        """(language, first line number, the block's lines, the line above it) of each fenced
        block; line numbers from 1."""
        found, number = [], 0
        while number < len(lines):
            opening = FENCE.match(lines[number])
            if not opening:
                number += 1
                continue
            indent, language = opening.group(1), opening.group(2).lower()
            end = number + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            body = [line[len(indent):] if line.startswith(indent) else line.lstrip()
                    for line in lines[number + 1:end]]
            above = number - 1
            while above >= 0 and not lines[above].strip():
                above -= 1
            found.append((language, number + 1, body, lines[above] if above >= 0 else ""))
            number = end + 1
        return found

    def check_blocks(self, page, lines):
        for language, number, body, above in self.blocks(lines):
            where = f"{page}:{number}"
            if language in CODE_LANGUAGES:
                self.check_code_block(where, body, above)
            elif language in SHELL_LANGUAGES:
                for offset, line in enumerate(body, start=1):
                    self.check_command(f"{page}:{number + offset}", strip_comment(line))

    def check_code_block(self, where, body, above):
        marker = MARKER.match(above)
        if not marker:
            self.problem(where, "a code block without a marker just above it: "
                         "<!-- example: PATH -->, <!-- excerpt: PATH --> or "
                         "<!-- not run: REASON -->")
            return
        kind, argument = marker.groups()
        if kind == "not run":
            if not argument:
                self.problem(where, "<!-- not run: --> needs a reason")
            return
        source = self.root / argument
        if not source.is_file():
            self.problem(where, f"{kind} {argument}: no such file")
            return
        text = source.read_text()
        if kind == "example":
            block = "\n".join(body) + "\n"
            if block != text:
                self.problem(where, f"the block is not {argument} (first difference at its line "
                             f"{first_difference(block, text)}): make them the same text")
            return
        file_lines = [code_of(line) for line in text.split("\n")]
        position = 0
        for offset, line in enumerate(body, start=1):
            if not line.strip() or line.strip() in ("// ...", "# ...", "..."):
                continue  # an elision
            try:
                position = file_lines.index(code_of(line), position) + 1
            except ValueError:
                self.problem(where, f"line {offset} of the excerpt is not in {argument} (in "
                             f"this order): {line.strip()!r}")
                return

    def check_inline_code(self, page, lines):
        for number, line in prose_lines(lines):
            for span in INLINE_CODE.findall(line):
                self.check_command(f"{page}:{number}", span)

    def check_command(self, where, command):
        for match in REPOSITORY_PATH.finditer(command):
            path = match.group(1).rstrip(".,:;")
            if PLACEHOLDER.search(path):
                continue
            if not (self.root / path).exists() and not self.is_target(path):
                self.problem(where, f"{path}: no such file or folder in the repository")
        try:
            words = shlex.split(command, comments=False)
        except ValueError:
            words = command.split()
        program = None
        for word in words:
            if word in ("|", "||", "&&", ";") or word.startswith("#"):
                program = None
                continue
            known = self.program_options(word)
            if known is not None:
                program = (word, known)
                continue
            if program and OPTION.match(word):
                option = word.split("=", 1)[0]
                if program[1] is not ANY and option not in program[1]:
                    self.problem(where, f"{program[0]} has no option {option}")

    def program_options(self, word):
        """The options the program `word` names defines, or None if it is not one of the
        repository's programs."""
        name = Path(word).name
        if name in ("fiber-es", "fiber-ppo"):
            key = name
        elif re.fullmatch(r"[\w./-]+\.(sh|py|sbatch)", word) and (self.root / word).is_file() \
                and REPOSITORY_PATH.fullmatch(word):
            key = word
        else:
            return None
        if key in FORWARDS:
            key = FORWARDS[key]
            if key is None:
                return ANY
        if key not in self._options:
            self._options[key] = self.options_of(key)
        return self._options[key]

    def is_target(self, path):
        """True if `path` is a program that the CMakeLists.txt of its folder builds (a build
        tree's file, named by its source folder)."""
        lists = self.root / Path(path).parent / "CMakeLists.txt"
        return lists.is_file() and re.search(r"add_executable\(\s*" + re.escape(Path(path).name)
                                             + r"\b", lists.read_text()) is not None

    def options_of(self, key):
        if key in ("fiber-es", "fiber-ppo", "slurm/es.sbatch", "slurm/ppo.sbatch"):
            app = "es" if "es" in Path(key).stem.split("-")[-1] else "ppo"
            sources = list((self.root / "apps" / app).glob("*.cpp"))
            sources += list((self.root / "apps" / "rl").rglob("*.cpp"))
            pattern = re.compile(r"(?:add_option|add_flag|set_config)\(\s*\"(--[\w-]+)")
            options = {m for source in sources for m in pattern.findall(source.read_text())}
            options.add("--help")
            return options
        # A script: the options it mentions.
        return set(OPTION.findall((self.root / key).read_text()))

    def check_links(self, page, lines):
        for number, line in prose_lines(lines):
            for _, target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # https:, mailto:
                path, _, anchor = target.partition("#")
                file = (self.root / page).parent / path if path else self.root / page
                if not file.exists():
                    self.problem(f"{page}:{number}", f"link to {target}: no such file")
                    continue
                if anchor and file.suffix == ".md" and anchor not in anchors(file):
                    self.problem(f"{page}:{number}", f"link to {target}: {path or page} has no "
                                 f"heading with the anchor #{anchor}")

    def declared(self):
        """The identifiers of the code (comments removed) of the public headers, the
        applications and the Python extension."""
        if not hasattr(self, "_declared"):
            words = set()
            for folder in ("libfiber/include", "apps", "python/src"):
                for source in (self.root / folder).rglob("*"):
                    if source.suffix in (".hpp", ".cpp", ".h"):
                        words.update(re.findall(r"[A-Za-z_]\w*", without_comments(source.read_text())))
            self._declared = words
        return self._declared

    def python_names(self):
        if not hasattr(self, "_python_names"):
            package = self.root / "python/fiber"
            init = (package / "__init__.py").read_text()
            names = set(re.findall(r"\"(\w+)\"", init[init.find("__all__"):]))
            names.update(module.stem for module in package.glob("*.py"))
            names.update({"__all__", "_fiber"})  # the list itself; the extension (python/src)
            self._python_names = names
        return self._python_names

    def check_names(self, where_prefix, lines, numbered=True):
        for number, line in enumerate(lines, start=1):
            where = f"{where_prefix}:{number}" if numbered else where_prefix
            for name in CPP_NAME.findall(line):
                for part in name.split("::"):
                    if part not in self.declared():
                        self.problem(where, f"fiber::{name}: {part} is not declared in the code")
                        break
            for name in PYTHON_NAME.findall(line):
                if name in FILE_SUFFIXES:
                    continue
                if name not in self.python_names():
                    self.problem(where, f"fiber.{name}: not a public name or module of the "
                                 f"package fiber")

    # ------------------------------------------------------------------ the repository

    def check_repository(self):
        self.check_citations()
        self.check_table_markers()
        for header in sorted((self.root / "libfiber/include/fiber").glob("*.hpp")):
            comments = re.findall(r"//.*", header.read_text())
            self.check_names(str(header.relative_to(self.root)), comments, numbered=False)

    def check_citations(self):
        listed = subprocess.run(["git", "-C", str(self.root), "ls-files"], capture_output=True,
                                text=True, check=True).stdout.split("\n")
        for name in listed:
            file = self.root / name
            if not name or not file.is_file() or file.stat().st_size > 2_000_000:
                continue
            try:
                text = file.read_text()
            except UnicodeDecodeError:
                continue
            # A citation may be cut by a comment's line break: join such lines.
            joined = re.sub(r"\n\s*(?://+|#+)?\s*", " ", text)
            for match in CITATION.finditer(joined):
                cited, section = match.groups()
                page = "README.md" if cited.startswith("README") else cited
                target = self.root / page
                if not target.is_file():
                    self.problem(name, f"cites {cited} \"{section}\": no such page")
                    continue
                if not any(heading.startswith(section) for heading in headings(target)):
                    self.problem(name, f"cites {cited} \"{section}\": {page} has no such heading")

    def check_table_markers(self):
        bench = (self.root / "scripts/bench.sh").read_text()
        # The reports that bench.sh runs with --page: through its report() function, or with
        # "${page[@]}" in the same command.
        scripts = set(re.findall(r"\breport \w+ (benchmarks/\w+/report\.py)", bench))
        for command in re.split(r"\|\||\n(?!\s)", bench):
            if "${page[@]}" in command:
                scripts.update(re.findall(r"benchmarks/\w+/report\.py", command))
        page_path = self.root / "docs/guide/benchmarks.md"
        page = page_path.read_text()
        for script in sorted(scripts):
            source = (self.root / script).read_text()
            for name in re.findall(r"publish\(\s*args,\s*(?:\"[^\"]*\"|'[^']*')\s*,\s*\"([^\"]+)\"",
                                   source):
                begin = f"<!-- {name} table: written by scripts/bench.sh -->"
                end = f"<!-- end of {name} table -->"
                if page.count(begin) != 1 or page.count(end) != 1 or page.find(end) < page.find(begin):
                    self.problem("docs/guide/benchmarks.md", f"{script} writes its table between "
                                 f"{begin} and {end}: the page needs each once, in that order")


def code_of(line):
    """A line of C++ or Python without its indentation and trailing comment: an excerpt may
    indent and comment its lines for the reader."""
    return re.sub(r"\s+(//|#) .*$", "", line.strip())


def without_comments(code):
    """C++ code without its // and /* */ comments (strings are left as they are)."""
    return re.sub(r"//[^\n]*", " ", re.sub(r"/\*.*?\*/", " ", code, flags=re.S))


def strip_comment(line):
    """A shell line without its trailing comment."""
    return re.sub(r"(^|\s)#.*$", "", line)


def first_difference(a, b):
    for number, (x, y) in enumerate(zip(a.split("\n"), b.split("\n")), start=1):
        if x != y:
            return number
    return min(len(a.split("\n")), len(b.split("\n")))


def headings(file):
    """The text of each Markdown heading of `file`, without its #s and backquotes."""
    found, inside = [], False
    for line in file.read_text().split("\n"):
        if FENCE.match(line) or line.strip() == "```":
            inside = not inside
        elif not inside and re.match(r"^#{1,6} ", line):
            found.append(line.lstrip("#").strip().replace("`", ""))
    return found


def anchors(file):
    """GitHub's anchors of the headings of `file`: lower case, punctuation dropped, spaces as
    hyphens, repeats numbered."""
    seen, result = {}, set()
    for heading in headings(file):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", help="Markdown pages, relative to the root")
    parser.add_argument("--root", default=Path(__file__).resolve().parent.parent,
                        help="the repository (default: this script's)")
    parser.add_argument("--repository", action="store_true",
                        help="check citations and the benchmark tables' markers")
    args = parser.parse_args()
    checker = Checker(args.root)
    for page in args.pages:
        checker.check_page(page)
    if args.repository:
        checker.check_repository()
    for line in checker.problems:
        print(f"check_docs.py: {line}")
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main())
