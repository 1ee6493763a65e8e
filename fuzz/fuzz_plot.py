#!/usr/bin/env python3
"""Fuzzes scripts/plot.py: mutated result JSONs (and hostile output paths) drawn in this process, for FUZZ_SECONDS.

  FUZZ_SECONDS=60 FUZZ_SEED=1 /usr/bin/python3 fuzz/fuzz_plot.py [--artifacts DIR] [SAVED_INPUT ...]

Each input is a seed of fuzz/corpus/plot/ (small real results of every kind plot.py draws) with 1-4 JSON-aware
mutations (a key deleted or renamed, a value of another type, a number made NaN, negative, zero, tiny or huge, a
label with `$` or a control character, a list grown, a value nested 40 deep, a container emptied) and sometimes a
mutation of the text (a key twice, a NaN or Infinity literal, truncation, flipped or non-UTF-8 bytes). Sometimes the
output is hostile too: an existing directory, a pipe, a missing folder, no .png, the input itself or a link to it.
plot.py's main() runs in this process with sys.argv set (a subprocess would start Python and matplotlib, ~0.6 s,
for every input); the run fails when it

  * exits with a status other than 0 or 2, or raises anything but SystemExit (an uncaught exception),
  * runs past 10 s (as the libFuzzer harnesses' -timeout),
  * exits 2 without a `plot.py: INPUT: ...` line on stderr, or exits 2 and leaves a PNG,
  * exits 2 through plot.py's last-resort handler (`cannot draw it`): an input the checks let through,
  * exits 0 without a PNG at the output, or leaves any other file (a temporary) in the output's folder.

The first failing input is saved under the artifacts folder (default build/fuzz/artifacts/plot/DATE-TIME) with a
note of the output mode and what went wrong; the path is printed and the exit status is 1. SAVED_INPUT files
(fuzz/crashes/plot/*, as scripts/fuzz.sh passes them) are replayed first. The seed is fixed (FUZZ_SEED, default 1):
the same seconds on the same machine give the same inputs.
"""
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import plot  # noqa: E402

CORPUS = os.path.join(ROOT, "fuzz", "corpus", "plot")
TIMEOUT_S = 10
OUT_MODES = ["normal"] * 17 + ["directory", "pipe", "missing-folder", "no-png", "input-itself", "link-to-input"]
LABELS = ["", "$x$", "$x^$", "a$b", "\x00", "tab\there", "x" * 201, "h200x\u00b2", "csix" + "9" * 150, "\u00e9\u4e2d",
          "\ud800", "h200x8", "fc", "osp", "full", "p50"]
NUMBERS = [0, -1, -0.0, -1e-9, 1e-13, 5e-324, 1e-12, 1e15, 1e16, 2 ** 53 + 1, 10 ** 20, 1.5, 7, 100, 0.5, 1.0001]
VALUES = [None, True, False, 0, 1.5, "s", [], {}, [1], {"a": 1}, [[]], "NaN"]
MAX_GROWN = 12_000  # items of a grown list: past every limit of plot.py, within a few MB of JSON


class Slow(BaseException):
    """Raised by SIGALRM: not an Exception, so that plot.py's last-resort handler cannot take it."""


def nodes(tree):
    """Every (container, key or index) of the JSON tree, iteratively (a mutated tree may be deep)."""
    out, stack = [], [tree]
    while stack:
        c = stack.pop()
        for k in (list(c) if isinstance(c, dict) else range(len(c))):
            out.append((c, k))
            if isinstance(c[k], (dict, list)):
                stack.append(c[k])
    return out


def mutate_value(rng, v):
    """Another value in place of v."""
    pick = rng.randrange(8)
    if pick == 0:
        return rng.choice(VALUES)
    if pick in (1, 2) and isinstance(v, (int, float)) and not isinstance(v, bool):
        return rng.choice([-v, 0, v * rng.choice([1e-20, 1e20, 1e300, -1]), rng.choice(NUMBERS)])
    if pick == 3:
        return rng.choice(LABELS)
    if pick == 4:
        for _ in range(rng.randrange(20, 45)):
            v = [v]
        return v
    if pick == 5 and isinstance(v, (list, dict)):
        return type(v)()
    if pick == 6 and isinstance(v, list) and v:
        return v * min(rng.choice([2, 10, 100, 400]), MAX_GROWN // len(v) + 1)
    if pick == 7 and isinstance(v, list) and v:  # one string of each item made distinct: more x values, lines, systems
        at = rng.randrange(8)
        return [distinct(x, i, at) for i, x in enumerate(v * min(rng.choice([1, 3, 30]), MAX_GROWN // len(v) + 1))]
    return rng.choice(NUMBERS + LABELS + VALUES)


def distinct(x, i, at):
    """x with its at-th string value (of an object; the string itself) prefixed by i."""
    s = json.dumps(x)
    if isinstance(x, str):
        s = f'"{i}' + s[1:]
    elif isinstance(x, dict):
        marks = [m.end() for m in re.finditer('": "', s)]
        if marks:
            cut = marks[at % len(marks)]
            s = s[:cut] + str(i) + s[cut:]
    return json.loads(s)


def mutate_tree(rng, tree):
    where = nodes(tree)
    if not where:
        return rng.choice(VALUES)
    # Numbers and labels first: a chart fails on a value at an edge far more often than on a shape.
    leaves = {t: [(c, k) for c, k in where if type(c[k]) in t] for t in ((int, float), (str,))}
    pick = rng.random()
    if pick < 0.4 and leaves[(int, float)]:
        c, k = rng.choice(leaves[(int, float)])
        c[k] = rng.choice(NUMBERS)
        return tree
    if pick < 0.55 and leaves[(str,)]:
        c, k = rng.choice(leaves[(str,)])
        c[k] = rng.choice(LABELS)
        return tree
    c, k = rng.choice(where)
    op = rng.randrange(10)
    if op < 2:
        del c[k]
    elif op == 2 and isinstance(c, dict):
        c[rng.choice(LABELS + list(c))] = c.pop(k)
    else:
        c[k] = mutate_value(rng, c[k])
    return tree


def raw(text):
    """The bytes of `text`, a lone surrogate included (as invalid UTF-8)."""
    return text.encode("utf-8", "surrogatepass")


def mutate_text(rng, text, tree):
    op = rng.randrange(6)
    if op == 0:  # a key twice in one object
        objects = [c[k] for c, k in nodes(tree) if isinstance(c[k], dict) and c[k]]
        if objects:
            o = rng.choice(objects)
            o["\x01dup"] = 1
            return raw(json.dumps(tree, indent=1).replace('"\\u0001dup"', json.dumps(next(iter(o)))))
    if op == 1:
        numbers = list(re.finditer(r"(?<=: )-?\d[\d.eE+-]*", text))
        if numbers:
            m = rng.choice(numbers)
            literal = rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" * 5000])
            return raw(text[:m.start()] + literal + text[m.end():])
    data = bytearray(raw(text))
    if op == 2 and data:
        return bytes(data[:rng.randrange(len(data))])
    for _ in range(rng.randrange(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.choice([0xff, 0xc3, 0x00, ord("["), ord("{"), ord('"'), ord(","),
                                                         rng.randrange(256)])
    return bytes(data)


def make_input(rng, seeds):
    tree = json.loads(rng.choice(seeds))
    for _ in range(rng.randrange(1, 5)):
        tree = mutate_tree(rng, tree)
    text = json.dumps(tree, indent=1, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.2:
        return mutate_text(rng, text, tree if isinstance(tree, (dict, list)) else [tree])
    return raw(text)


def prepare_output(mode, work, src):
    """The OUT argument for `mode`, its fixture made in `work`."""
    out = os.path.join(work, "out.png")
    if mode == "directory":
        os.mkdir(out)
    elif mode == "pipe":
        os.mkfifo(out)
    elif mode == "missing-folder":
        return os.path.join(work, "missing", "out.png")
    elif mode == "no-png":
        return os.path.join(work, "out")
    elif mode == "input-itself":
        return src
    elif mode == "link-to-input":
        os.symlink(src, out)
    return out


def clear(work):
    for name in os.listdir(work):
        path = os.path.join(work, name)
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)


def run_once(data, mode, work):
    """Runs plot.py on `data` with the output `mode`: (exit status, '' when it behaved, else what went wrong)."""
    clear(work)
    src = os.path.join(work, "in.png" if mode == "input-itself" else "in.json")
    with open(src, "wb") as f:
        f.write(data)
    out = prepare_output(mode, work, src)
    before = sorted(os.listdir(work))
    sys.argv = ["plot.py", src, out]
    err = io.StringIO()
    rc, problem = None, ""
    signal.alarm(TIMEOUT_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            plot.main()
        rc = 0
    except SystemExit as e:
        rc = 0 if e.code is None else e.code if isinstance(e.code, int) else 1  # as the interpreter's exit status
    except Slow:
        problem = f"ran past {TIMEOUT_S} s"
    except BaseException:
        problem = "uncaught exception:\n" + traceback.format_exc()
    finally:
        signal.alarm(0)
    return rc, problem or check_outcome(rc, err.getvalue(), mode, src, out, before, sorted(os.listdir(work)))


def check_outcome(rc, err, mode, src, out, before, after):
    if rc not in (0, 2):
        return f"exit status {rc}:\n{err}"
    if rc == 2 and f"plot.py: {src}: " not in err:
        return f"exit 2 without a message naming the input:\n{err}"
    if rc == 2 and f"plot.py: {src}: cannot draw it (" in err:
        return f"only the last-resort handler caught it (a check is missing):\n{err}"
    if rc == 2 and after != before:
        return f"exit 2 and files left: {after} (before: {before})"
    if rc == 0:
        if mode != "normal":
            return f"exit 0 for the output mode {mode}"
        with open(out, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                return "exit 0 and the output is not a PNG"
        if after != sorted(before + ["out.png"]):
            return f"exit 0 and other files left: {after}"
    return ""


def save_artifact(folder, n, data, mode, problem):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"crash-{n}.json")
    with open(path, "wb") as f:
        f.write(data)
    with open(path + ".txt", "w") as f:
        f.write(f"output mode: {mode}\n{problem}\n")
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    args = sys.argv[1:]
    artifacts = os.path.join(ROOT, "build", "fuzz", "artifacts", "plot", time.strftime("%Y%m%d-%H%M%S"))
    if args[:1] == ["--artifacts"]:
        artifacts, args = args[1], args[2:]
    seconds = float(os.environ.get("FUZZ_SECONDS", "60"))
    rng = random.Random(int(os.environ.get("FUZZ_SEED", "1")))
    seeds = [read(os.path.join(CORPUS, f)).decode() for f in sorted(os.listdir(CORPUS)) if f.endswith(".json")]

    def on_alarm(*_):
        raise Slow()
    signal.signal(signal.SIGALRM, on_alarm)
    scratch = os.environ.get("BITLINE_FUZZ_SCRATCH") or None
    work = tempfile.mkdtemp(prefix="fuzz-plot.", dir=scratch)
    replays = [(read(p), "normal") for p in args]
    runs, codes, t0 = 0, {"0": 0, "2": 0}, time.monotonic()
    try:
        while replays or time.monotonic() - t0 < seconds:
            data, mode = replays.pop(0) if replays else (make_input(rng, seeds), rng.choice(OUT_MODES))
            rc, problem = run_once(data, mode, work)
            runs += 1
            if problem:
                path = save_artifact(artifacts, runs, data, mode, problem)
                print(f"fuzz plot: FAILED on run {runs} (output mode {mode}): {problem.strip().splitlines()[-1][:300]}\n"
                      f"  input: {path} (what went wrong: {path}.txt)", file=sys.stderr)
                return 1
            codes[str(rc)] += 1
    finally:
        shutil.rmtree(work)
    wall = time.monotonic() - t0
    print(f"stat::number_of_executed_units: {runs}\nstat::runs_per_second: {runs / max(wall, 1e-9):.1f}\n"
          f"stat::exit_0: {codes['0']}\nstat::exit_2: {codes['2']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
