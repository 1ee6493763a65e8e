#!/usr/bin/env python3
"""The model's figures that the prose of README.md and docs/*.md repeats, kept equal to the generated tables.

A figure the prose repeats from a generated table is marked where it stands: `<!--v:NAME-->2.57x<!--/v-->` (HTML
comments: the rendered page shows 2.57x). NAME is registered once, in VALUES below, with where the figure is read: a
table or line of a GENERATED block (written by `make validate`, `make ssd-drives`, `make ssb` or `make
serve-capacity`) or of a section of docs/validation.md (written whole by `make validate`), and how. A list of CSV
columns the docs give is marked the same way and registered with the command that writes that CSV.

  doc_values.py check [BITLINE]   exit 1 if a marked figure differs from its source, a mark names no registered NAME,
                                  a registered NAME is marked nowhere, or a mark is malformed. With BITLINE, the
                                  marked column lists are also compared with the CSV headers the program writes.
  doc_values.py write             rewrite every marked figure from its source (the make targets above run it last)

Run by `make doc-commands` (scripts/check_doc_commands.py, with the program) and by ctest (Scripts.PlotPy:
tests/scripts/test_doc_values.py, without it). Standard library only.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A mark right after a backquote is an example of the syntax in inline code, not a mark.
MARK = re.compile(r"(?<!`)<!--v:([^>]*?)-->(.*?)<!--/v-->", re.S)
# Files written whole by a make target: a source there is a section ("## heading"), not a GENERATED block.
WHOLE = {"docs/validation.md"}


# ---------------------------------------------------------------- how a figure is read from its source text


def cells(line):
    """The cells of a Markdown table row (a `\\|` inside a cell is no separator)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def tables(text):
    """(header cells, rows of cells) of every table in text."""
    out, cur = [], None
    for line in text.split("\n"):
        if line.startswith("|"):
            if cur is None:
                cur = (cells(line), [])
                out.append(cur)
            elif not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
                cur[1].append(cells(line))
        else:
            cur = None
    return out


def cell(row, column, pick=None, fmt=None):
    """The cell in `column` (its header) of the one row whose first cells are `row` (a string or a tuple); `pick`, a
    regular expression, takes its first group (or whole match) from the cell, `fmt` turns the text into the figure."""
    key = (row,) if isinstance(row, str) else tuple(row)

    def get(text):
        found = [r[h.index(column)] for h, rows in tables(text) if column in h
                 for r in rows if tuple(r[:len(key)]) == key and len(r) == len(h)]
        if len(found) != 1:
            raise LookupError(f"{len(found)} cells in column '{column}' of a row {' | '.join(key)}")
        return _pick(found[0], pick, fmt)
    return get


def match(pattern, fmt=None):
    """Group 1 of the one match of `pattern` in the source text (it must match once)."""
    def get(text):
        found = re.findall(pattern, text)
        if len(found) != 1:
            raise LookupError(f"{len(found)} matches of /{pattern}/")
        return fmt(found[0]) if fmt else found[0]
    return get


def _pick(text, pick, fmt):
    if pick:
        m = re.search(pick, text)
        if not m:
            raise LookupError(f"/{pick}/ not in '{text}'")
        text = m.group(1) if m.groups() else m.group(0)
    return fmt(text) if fmt else text


def count(test, rows_of=None):
    """The number of rows (of every table in the source, or of those `rows_of` keeps) for which test(row dict) holds."""
    def get(text):
        rows = [dict(zip(h, r)) for h, rs in tables(text) for r in rs if len(r) == len(h)]
        return str(sum(1 for r in rows if (rows_of is None or rows_of(r)) and test(r)))
    return get


class Columns:
    """A CSV's columns as the docs list them (backquoted names in order; `name.*` stands for one or more columns
    `name.x`), checked against the header of the CSV that `bitline ARGS` writes to {csv}."""

    def __init__(self, *args):
        self.args = args

    def header(self, binary):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.csv")
            subprocess.run([binary, *(a.replace("{csv}", path) for a in self.args)], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
            with open(path, encoding="utf-8") as f:
                return f.readline().strip().split(",")

    @staticmethod
    def differ(documented, header):
        """Where the documented list and the header part, or None when they agree."""
        names = re.findall(r"`([^`]+)`", documented)
        i = 0
        for n in names:
            if n.endswith(".*"):
                j = i
                while j < len(header) and header[j].startswith(n[:-1]):
                    j += 1
                if j == i:
                    return f"`{n}` matches no column at {header[i] if i < len(header) else 'the end'}"
                i = j
            elif i < len(header) and header[i] == n:
                i += 1
            else:
                return f"`{n}` documented where the CSV has {header[i] if i < len(header) else 'no more columns'}"
        return None if i == len(header) else f"undocumented columns: {', '.join(header[i:])}"


# ---------------------------------------------------------------- the registry: NAME -> (source, how)

HEADLINE = ("README.md", "headline")
ACCEL = ("docs/llm.md", "accel-results")
SESSIONS = ("docs/llm.md", "accel-sessions")
COSMOS = ("docs/validation.md", "## Flash-Cosmos (MICRO 2022)")
DRIVES = ("docs/ssd.md", "drives")


def within_15(r):
    return r["deviation"] != "-" and "**>15%**" not in r["deviation"]


VALUES = {
    # README's sample: the Llama-3.1-405B 15K/6K point on 8 x CSI at 50 ms
    "llama-csix8-bound": (HEADLINE, cell("Llama-405B 15K/6K 8xCSI @50ms, bandwidth bound", "bitline")),
    "llama-csix8-batch": (HEADLINE, cell("Llama-405B 15K/6K 8xCSI @50ms, full step", "bitline")),
    # the general SSD against the 980 PRO's and 970 EVO Plus's published figures
    "drives-980-970-within": (DRIVES, count(within_15, lambda r: "990" not in r["drive"])),
    "drives-980-970-published": (DRIVES, count(lambda r: r["deviation"] != "-", lambda r: "990" not in r["drive"])),
    # the CSV columns of `serve run --requests-out F.csv` and `serve sweep --csv F`
    "serve-requests-csv": (None, Columns("serve", "run", "--model", "llama2-7b", "--system", "h100x1", "--rate", "4",
                                         "--input", "300", "--output", "50", "--requests", "20", "--requests-out",
                                         "{csv}")),
    "serve-sweep-csv": (None, Columns("serve", "sweep", "--model", "llama2-7b", "--system", "h100x1", "--rates", "1,4",
                                      "--input", "300", "--output", "50", "--requests", "20", "--csv", "{csv}")),
}


# ---------------------------------------------------------------- the check and the rewrite


def docs(root):
    return ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))


def source_text(root, source, cache):
    """The text of a GENERATED block, or of a section of a file written whole."""
    if source not in cache:
        path, block = source
        text = open(os.path.join(root, path), encoding="utf-8").read()
        if path in WHOLE:
            m = re.search(r"^" + re.escape(block) + r"\n(.*?)(?=^#{1,2} |\Z)", text, re.S | re.M)
        else:
            m = re.search(r"<!-- GENERATED " + re.escape(block) + r": [^>]*-->\n(.*?)<!-- END GENERATED " +
                          re.escape(block) + r" -->", text, re.S)
        if not m:
            raise LookupError(f"{path} has no {'section' if path in WHOLE else 'GENERATED block'} '{block}'")
        cache[source] = m.group(1)
    return cache[source]


def expected(root, name, cache):
    source, how = VALUES[name]
    try:
        return how(source_text(root, source, cache)), None
    except (LookupError, ValueError, OSError) as e:
        return None, f"{name}: cannot read it from {source[0]} ({source[1]}): {e}"


def marks(root):
    """(file, line number, name, value, (start, end) of the value in the file's text) of every mark, and the problems
    of malformed ones. A value may run over lines (a list of columns); a figure is one line."""
    found, bad = [], []
    for path in docs(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        fences = [m.start() for m in re.finditer(r"^\s*```", text, re.M)]
        ms = list(MARK.finditer(text))
        if len(re.findall(r"(?<!`)<!--v:", text)) != len(ms) or len(re.findall(r"<!--/v-->(?!`)", text)) != len(ms):
            bad.append(f"{path}: a mark without its end, or an end without its mark (<!--v:NAME-->value<!--/v-->)")
        for m in ms:
            n = text.count("\n", 0, m.start()) + 1
            if sum(1 for f in fences if f < m.start()) % 2:
                bad.append(f"{path}:{n}: a mark inside a code block (it would show)")
            if "<!--" in m.group(2):
                bad.append(f"{path}:{n}: a mark inside a mark")
            found.append((path, n, m.group(1), m.group(2), m.span(2)))
    return found, bad


def check(root=ROOT, binary=None):
    """Every problem, one line each (none: the docs agree with their sources)."""
    found, problems = marks(root)
    cache, headers, used = {}, {}, set()
    for path, n, name, value, _ in found:
        used.add(name)
        if name not in VALUES:
            problems.append(f"{path}:{n}: unknown value name '{name}' (register it in scripts/doc_values.py VALUES)")
            continue
        source, how = VALUES[name]
        if isinstance(how, Columns):
            if binary:
                if name not in headers:
                    headers[name] = how.header(binary)
                why = Columns.differ(value, headers[name])
                if why:
                    problems.append(f"{path}:{n}: {name}: the documented columns differ from the CSV's: {why}")
            continue
        want, err = expected(root, name, cache)
        if err:
            problems.append(f"{path}:{n}: {err}")
        elif value != want:
            problems.append(f"{path}:{n}: {name} is '{value}' here but '{want}' in {source[0]} ({source[1]}); "
                            "`python3 scripts/doc_values.py write` rewrites it")
    for name in sorted(set(VALUES) - used):
        problems.append(f"scripts/doc_values.py: '{name}' is registered but marked nowhere (remove it)")
    return problems


def write(root=ROOT):
    """Rewrites every marked figure from its source; returns the problems left (check's, without the program)."""
    found, problems = marks(root)
    cache, edits = {}, {}
    for path, n, name, value, span in found:
        if name in VALUES and not isinstance(VALUES[name][1], Columns):
            want, err = expected(root, name, cache)
            if err:
                problems.append(f"{path}:{n}: {err}")
            elif want != value:
                edits.setdefault(path, []).append((span, want))
    for path, changes in edits.items():
        full = os.path.join(root, path)
        text = open(full, encoding="utf-8").read()
        for (a, b), want in sorted(changes, reverse=True):
            text = text[:a] + want + text[b:]
        open(full, "w", encoding="utf-8").write(text)
        print(f"doc_values: {len(changes)} figure(s) rewritten in {path}")
    return problems or check(root)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "check" and len(sys.argv) <= 3:
        problems = check(ROOT, os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else None)
        n = len(marks(ROOT)[0])
    elif sys.argv[1:] == ["write"]:
        problems, n = write(ROOT), len(marks(ROOT)[0])
    else:
        print(__doc__)
        return 2
    for p in problems:
        print("  " + p)
    print(f"doc_values: {n} marked figures, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
