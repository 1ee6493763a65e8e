#!/usr/bin/env python3
"""Serving capacity of every model on every system of an experiment file (`make serve-capacity`).

  serve_capacity.py BITLINE EXPERIMENT.yaml OUT.json [FIGURE.png [DOC.md]]

Runs `BITLINE serve capacity` once per (model, system) of EXPERIMENT.yaml (configs/experiments/serve-capacity.yaml:
models, systems, input, output, requests, seed, slo_p90_ttft_ms, slo_p99_tpot_ms, tolerance, rate_lo, set, and for
disaggregated serving disaggregate "P:D" and prefill_system), collects
each result JSON into OUT.json ({"experiment", "points": [{model, system, capacity_requests_per_s,
first_miss_requests_per_s, output_tokens_per_s_at_capacity, probes}]}; a point that cannot be served, because the
model or a request does not fit or no rate meets the SLOs, has capacity 0 and "infeasible": the reason) and, with
FIGURE.png, draws the capacities as bars per model (matplotlib, Debian python3-matplotlib); with DOC.md, writes the
table model | system | deployment | capacity | output tokens/s | the SLO that the first rate beyond it missed between
the GENERATED markers of DOC.md named after the experiment (`experiment:`). Progress on stderr. Exit 2 for a bad experiment file;
a failing run stops the script with its output.
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

KEYS = {"experiment", "models", "systems", "input", "output", "requests", "seed", "slo_p90_ttft_ms",
        "slo_p99_tpot_ms", "tolerance", "rate_lo", "set", "disaggregate", "prefill_system"}


def fail(msg):
    print(f"serve_capacity.py: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        e = yaml.safe_load(open(path))
    except (OSError, yaml.YAMLError) as err:
        fail(f"{path}: cannot read ({err})")
    if not isinstance(e, dict):
        fail(f"{path}: expected a mapping of {sorted(KEYS)}")
    unknown = set(e) - KEYS
    if unknown:
        fail(f"{path}: unknown key(s) {sorted(unknown)} (known: {sorted(KEYS)})")
    for k in ("models", "systems", "input", "output", "requests"):
        if k not in e:
            fail(f"{path}: missing key {k}")
    for k in ("models", "systems"):
        if not isinstance(e[k], list) or not e[k]:
            fail(f"{path}: {k}: expected a non-empty list")
    return e


def run(bitline, e, model, system):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cap.json")
        cmd = [bitline, "serve", "capacity", "--model", model, "--system", system, "--input", str(e["input"]),
               "--output", str(e["output"]), "--requests", str(e["requests"]), "--seed", str(e.get("seed", 1)),
               "--slo-p90-ttft-ms", str(e.get("slo_p90_ttft_ms", 2000)), "--slo-p99-tpot-ms",
               str(e.get("slo_p99_tpot_ms", 100)), "--tolerance", str(e.get("tolerance", 0.02)), "--json", out]
        if "engine" in e:
            cmd += ["--engine", str(e["engine"])]
        if "rate_lo" in e:
            cmd += ["--rate-lo", str(e["rate_lo"])]
        if "disaggregate" in e:
            cmd += ["--disaggregate", str(e["disaggregate"])]
        if "prefill_system" in e:
            cmd += ["--prefill-system", str(e["prefill_system"])]
        for s in e.get("set") or []:
            cmd += ["--set", str(s)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 2:  # the point cannot be served (the model or a request does not fit, no rate meets)
            lines = [ln for ln in (p.stderr + p.stdout).splitlines() if "error" in ln]
            return {"infeasible": lines[-1] if lines else (p.stderr + p.stdout).strip()[-500:]}
        if p.returncode != 0:
            print(" ".join(cmd), file=sys.stderr)
            print(p.stdout[-3000:] + p.stderr[-3000:], file=sys.stderr)
            sys.exit(p.returncode)
        return json.load(open(out))


def figure(points, models, systems, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.8 / len(systems)
    for i, s in enumerate(systems):
        ys = [next(p["capacity_requests_per_s"] for p in points if p["model"] == m and p["system"] == s) for m in models]
        bars = ax.bar([x + i * width for x in range(len(models))], ys, width, label=s)
        for b, y in zip(bars, ys):
            ax.annotate(f"{y:.2g}" if y > 0 else "does\nnot fit", (b.get_x() + b.get_width() / 2, y), ha="center",
                        va="bottom", fontsize=7)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(models))], models)
    ax.set_ylabel("capacity (requests/s meeting both SLOs)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main():
    if len(sys.argv) not in (4, 5, 6):
        print(__doc__)
        sys.exit(2)
    bitline, exp_path, out = sys.argv[1:4]
    e = load(exp_path)
    points = []
    n = len(e["models"]) * len(e["systems"])
    for m in e["models"]:
        for s in e["systems"]:
            print(f"[{len(points) + 1}/{n}] {m} on {s}", file=sys.stderr, flush=True)
            j = run(bitline, e, m, s)
            if "infeasible" in j:
                points.append({"model": m, "system": s, "capacity_requests_per_s": 0.0, "infeasible": j["infeasible"]})
                print(f"    not served: {j['infeasible']}", file=sys.stderr, flush=True)
                continue
            cap = j["capacity_requests_per_s"]
            at = [p for p in j["probes"] if p["rate_per_s"] == cap]
            miss = [p for p in j["probes"] if p["rate_per_s"] == j["first_miss_requests_per_s"]]
            missed = []
            if miss:
                if miss[0]["p90_ttft_ms"] > e.get("slo_p90_ttft_ms", 2000):
                    missed.append("p90 TTFT")
                if miss[0]["p99_tpot_ms"] > e.get("slo_p99_tpot_ms", 100):
                    missed.append("p99 TPOT")
            points.append({"model": m, "system": s, "deployment": j["deployment"],
                           "capacity_requests_per_s": cap, "first_miss_requests_per_s": j["first_miss_requests_per_s"],
                           "output_tokens_per_s_at_capacity": at[0]["output_tokens_per_s"] if at else None,
                           "deployment_choice": j.get("deployment_choice", "preferred"),
                           "binding_slo": " and ".join(missed), "probes": j["probes"]})
            print(f"    capacity {cap:.3f} requests/s", file=sys.stderr, flush=True)
    res = {"experiment": {k: e[k] for k in sorted(e)}, "points": points}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".partial", "w") as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(out + ".partial", out)
    print(f"wrote {out}")
    if len(sys.argv) >= 5:
        how = (f"decode side, {e['disaggregate']} with {e['prefill_system']} prefill" if "disaggregate" in e
               else "prefill and decode on the same GPUs")
        title = (f"{e['input']} in / {e['output']} out, p90 TTFT <= {e.get('slo_p90_ttft_ms', 2000):g} ms, "
                 f"p99 TPOT <= {e.get('slo_p99_tpot_ms', 100):g} ms\n{how} (bitline serve capacity)")
        figure(points, e["models"], e["systems"], title, sys.argv[4])
        print(f"wrote {sys.argv[4]}")
    if len(sys.argv) == 6:
        table(e, points, sys.argv[5])
        print(f"updated {sys.argv[5]}")


def table(e, points, doc):
    lines = ["| model | system | deployment | capacity (requests/s) | output tokens/s over that run | first miss beyond it |",
             "|---|---|---|---|---|---|"]
    for p in points:
        if "infeasible" in p:
            lines.append(f"| {p['model']} | {p['system']} | - | not served | - | {p['infeasible']} |")
            continue
        d = p["deployment"].get("description", "") if isinstance(p["deployment"], dict) else str(p["deployment"])
        if p.get("deployment_choice", "preferred") != "preferred":
            d += " (the preferred one cannot hold the longest request)"
        lines.append(f"| {p['model']} | {p['system']} | {d} | {p['capacity_requests_per_s']:.3g} | "
                     f"{p['output_tokens_per_s_at_capacity']:,.0f} | {p['binding_slo']} at "
                     f"{p['first_miss_requests_per_s']:.3g}/s |")
    name = e.get("experiment", "serve-capacity")
    begin, end = f"<!-- GENERATED {name}: make serve-capacity -->", f"<!-- END GENERATED {name} -->"
    text = open(doc).read()
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        fail(f"{doc}: no {begin} ... {end} markers")
    text = text[: a + len(begin)] + "\n" + "\n".join(lines) + "\n" + text[b:]
    with open(doc + ".partial", "w") as f:
        f.write(text)
    os.replace(doc + ".partial", doc)


if __name__ == "__main__":
    main()
