#!/usr/bin/env python3
"""Ranks of an MPI job that disagree end together with exit 2, never hang (docs/commands.md, "MPI: the ranks agree").

  ranks_must_agree.py MPIEXEC BITLINE EXPERIMENT    (EXPERIMENT: a small cosmos eval experiment)

Cases, each under mpirun -n 2 with a 120 s timeout: another --set on rank 1; another subcommand on rank 1;
an output folder that only rank 1 cannot write (its --json path is under a regular file). Each must exit 2
with the reason printed by rank 0. Exit 0 when all hold; 1 with the failing case otherwise.
"""
import os
import subprocess
import sys
import tempfile


def main():
    mpiexec, bitline, experiment = sys.argv[1], sys.argv[2], sys.argv[3]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    base = f"exec '{bitline}' cosmos eval --quiet --threads 1 --experiment '{experiment}'"
    failures = []
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "r0"))
        with open(os.path.join(d, "r1"), "w") as f:
            f.write("a file where rank 1's output folder should be\n")
        cases = [
            ("another --set on rank 1", base + " --set sim.seed=$((OMPI_COMM_WORLD_RANK + 1))", "different inputs"),
            ("another subcommand on rank 1",
             f'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then {base}; else exec \'{bitline}\' describe; fi', "different inputs"),
            ("an output folder only rank 1 cannot write", base + f" --json '{d}'/r$OMPI_COMM_WORLD_RANK/out.json", "r1"),
        ]
        for name, script, needle in cases:
            cmd = [mpiexec, "-n", "2", "--oversubscribe", "sh", "-c", script]
            try:
                p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: the job hung (killed after 120 s)")
                continue
            if p.returncode != 2 or needle not in p.stdout:
                failures.append(f"{name}: exit {p.returncode} (expected 2 and '{needle}'):\n{p.stdout[-2000:]}")
        if os.path.exists(os.path.join(d, "r0", "out.json")):
            failures.append("rank 0 wrote its result although rank 1 could not")
    if failures:
        sys.exit("\n".join(failures))
    print("every disagreement ended the job with exit 2")


if __name__ == "__main__":
    main()
