#!/usr/bin/env python3
"""Runs every command the docs show, as written, on the built tree (CI: `make doc-commands`).

Usage: check_doc_commands.py BITLINE FILE.md [FILE.md ...]

What is checked: every ```sh block of the given Markdown files. In a block,
  - a line `B=...` sets the variable the other lines use for the binary (it is always BITLINE here);
  - a line starting with `$B`, `bitline`, `mpirun`, `python3 scripts/...` or `PYTHONPATH=build/release/python python3`
    (the Python module and examples/, docs/python.md) is a command: it must exit 0;
  - `make ...` lines are not run (CI runs the make targets themselves), nor comments;
  - a command whose line ends in `# skip: REASON` is not run, and REASON must be given
    (e.g. it needs a cluster's hostfile, or minutes).
A ```` ```text output ```` block is what the command before it prints (the last command of the ```sh block before
it): its lines must appear, in that order, among the lines the command writes to stdout (so a sample output may
leave lines out, but cannot differ from the program's).
A ```yaml block whose first line is `# NAME.yaml` is a file the docs ask the reader to write:
it is written as NAME.yaml before the commands run. Commands run in a scratch folder holding
those files and links to the repository's configs/ and build/, so `results/...` outputs land
in the scratch folder, never in the clone. A failing command prints its file, line, command
and the end of its output; the script then exits 1.

Then the figures the prose repeats from generated tables, the figures of example runs (each registered with the
command that prints it), and the CSV columns the docs list, are checked against their sources
(scripts/doc_values.py, with this program for the example runs and the CSV headers): a disagreement fails the same
way.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import doc_values

FENCE = re.compile(r"^```(\w*)(?:[ \t]+(\w+))?\s*$")
SKIP = re.compile(r"#\s*skip:\s*(.*)$")
TIMEOUT_S = 300


def blocks(path):
    """(language, first line number, lines, the word after the language) of each fenced block."""
    out, lang, start, cur, word = [], None, 0, None, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip("\n"))
            if m and cur is None:
                lang, start, cur, word = m.group(1), n + 1, [], m.group(2)
            elif line.startswith("```") and cur is not None:
                out.append((lang, start, cur, word))
                cur = None
            elif cur is not None:
                cur.append(line.rstrip("\n"))
    return out


def commands(lines, start):
    """(line number, text) of each logical line (backslash continuations joined)."""
    out, buf, first = [], "", None
    for i, line in enumerate(lines):
        if first is None:
            first = start + i
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((first, (buf + line).strip()))
        buf, first = "", None
    return out


def strip_comment(cmd):
    """The command without a trailing `  # ...` comment."""
    return re.sub(r"\s+#\s.*$", "", cmd).strip()


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.access(binary, os.X_OK):
        print(f"check_doc_commands: {binary} is not an executable (build first)")
        return 2
    scratch = tempfile.mkdtemp(prefix="bitline-doc-commands-")
    for name in ("configs", "build", "scripts", "examples"):
        os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    env = dict(os.environ, B=binary, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    todo, skipped, bad, shown = [], [], [], []
    for md in sys.argv[2:]:
        last = None  # the last command of the file's last ```sh block: (index in todo) or a line of why not
        for lang, start, lines, word in blocks(md):
            if lang == "text" and word == "output":
                if isinstance(last, int):
                    shown.append((md, start, lines, last))
                else:
                    bad.append(f"{md}:{start}: a ```text output block with no command run before it ({last or 'none'})")
            if lang == "yaml" and lines and re.match(r"^#\s*[\w.-]+\.ya?ml\s*$", lines[0]):
                with open(os.path.join(scratch, lines[0].lstrip("#").strip()), "w", encoding="utf-8") as f:
                    f.write("\n".join(lines) + "\n")
            if lang != "sh":
                continue
            for n, text in commands(lines, start):
                if not text or text.startswith("#") or text.startswith("make ") or text.startswith("B=") or text.startswith(".ci/"):
                    continue
                m = SKIP.search(text)
                if m:
                    if not m.group(1).strip():
                        bad.append(f"{md}:{n}: `# skip:` without a reason")
                    skipped.append(f"{md}:{n}: {m.group(1).strip()}")
                    last = f"line {n} is skipped"
                    continue
                if not re.match(r"^(\$B|bitline|mpirun|/usr/bin/python3 scripts/|python3 scripts/|PYTHONPATH=build/release/python (/usr/bin/)?python3 )", text):
                    bad.append(f"{md}:{n}: not a command this check knows how to run (start it with $B, or mark it `# skip: reason`): {text}")
                    continue
                todo.append((md, n, strip_comment(text).replace("bitline ", "$B ", 1) if text.startswith("bitline ") else strip_comment(text)))
                last = len(todo) - 1
    failures = list(bad)
    t0 = time.time()
    printed = {}
    for i, (md, n, cmd) in enumerate(todo):
        start = time.time()
        try:
            p = subprocess.run(["bash", "-c", cmd], cwd=scratch, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
            rc, tail = p.returncode, (p.stdout + p.stderr)[-1500:]
            printed[i] = p.stdout
        except subprocess.TimeoutExpired:
            rc, tail = "timeout", f"ran past {TIMEOUT_S} s"
        status = "ok" if rc == 0 else f"FAILED ({rc})"
        print(f"{status:>10} {time.time() - start:6.1f} s  {md}:{n}: {cmd}")
        if rc != 0:
            failures.append(f"{md}:{n}: {cmd}\n    exit {rc}; last output:\n" + "\n".join("    " + l for l in tail.splitlines()))
    for md, start, lines, i in shown:
        out = [l.rstrip() for l in printed.get(i, "").splitlines()]
        at = 0
        for k, line in enumerate(lines):
            try:
                at = out.index(line.rstrip(), at) + 1
            except ValueError:
                failures.append(f"{md}:{start + k}: the sample output's line is not what `{todo[i][2]}` prints (in this "
                                f"order):\n    {line}\n    it prints:\n" + "\n".join("    " + l for l in out))
                break
    print(f"{'ok' if len(failures) == len(bad) else 'FAILED':>10}           {len(shown)} sample output(s) against what their commands print")
    values = doc_values.check(root, binary)
    found = doc_values.marks(root)[0]
    print(f"{'ok' if not values else 'FAILED':>10}           doc_values: {len(found)} marked figures and column lists "
          f"({sum(1 for m in found if doc_values.of_run(m[2]))} of them from the output of the commands they name)")
    failures += values
    for s in skipped:
        print(f"{'skipped':>10}           {s}")
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"check_doc_commands: {len(todo)} commands run in {time.time() - t0:.0f} s, {len(skipped)} skipped, {len(failures)} failed")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
