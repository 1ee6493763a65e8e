#!/usr/bin/env python3
"""Runs a bitline command in one process and under mpirun with N ranks, and checks that
the JSON results are byte-identical and that the MPI run really used N ranks (rank 0 prints it).

  same_as_single.py MPIEXEC N BITLINE ARGS...    (ARGS without --json)

Exit 0 when identical; 1 with the first differences otherwise. Python standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}")
    return p.stdout


def main():
    mpiexec, n, bitline, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory() as d:
        one, many = os.path.join(d, "one.json"), os.path.join(d, "many.json")
        run([bitline] + args + ["--json", one], env)
        out = run([mpiexec, "-n", str(n), "--oversubscribe", bitline] + args + ["--json", many], env)
        with open(one) as f:
            a = json.load(f)
        with open(many) as f:
            b = json.load(f)
        with open(one) as f, open(many) as g:
            text_one, text_many = f.read(), g.read()
    # How it ran is printed, not written (same inputs, same bytes): rank 0 says how many ranks took part.
    if f"on {n} rank(s)" not in out and f"({n} rank(s)" not in out:
        sys.exit(f"the MPI run does not report {n} ranks:\n{out}")
    a.pop("run", None)
    b.pop("run", None)
    if a != b:
        diffs = []

        def walk(x, y, path):
            if len(diffs) > 10:
                return
            if type(x) is not type(y):
                diffs.append(f"{path}: {x!r} vs {y!r}")
            elif isinstance(x, dict):
                for k in sorted(set(x) | set(y)):
                    walk(x.get(k), y.get(k), f"{path}/{k}")
            elif isinstance(x, list):
                if len(x) != len(y):
                    diffs.append(f"{path}: {len(x)} vs {len(y)} items")
                for i, (u, v) in enumerate(zip(x, y)):
                    walk(u, v, f"{path}/{i}")
            elif x != y:
                diffs.append(f"{path}: {x!r} vs {y!r}")

        walk(a, b, "")
        sys.exit("results differ:\n" + "\n".join(diffs))
    # Byte for byte: the files agree line by line outside the "run" object.
    def strip_run(text):
        lines, out, skip = text.splitlines(), [], False
        for line in lines:
            if line.startswith('  "run": {'):
                skip = True
            if not skip:
                out.append(line)
            if skip and line.startswith("  }"):
                skip = False
        return out
    if strip_run(text_one) != strip_run(text_many):
        sys.exit("the files differ in their text (outside the run object)")
    if "wrote" not in out:
        sys.exit("rank 0 did not report writing the file:\n" + out)
    print(f"identical with {n} ranks ({len(json.dumps(a))} bytes of results)")


if __name__ == "__main__":
    main()
