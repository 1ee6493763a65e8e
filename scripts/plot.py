#!/usr/bin/env python3
"""Draws any bitline result JSON as the natural chart for its kind (matplotlib, Debian python3-matplotlib).

  plot.py RESULT.json [OUT.png]          (default OUT: RESULT.png beside the input)

The kind is recognised from the JSON's keys:
  cosmos eval       -> speedup of every system over OSP per workload point, the paper's averages dashed
  cosmos write-bw   -> write bandwidth per program mode, both schemes, the paper's ESP figure beside
  accel eval        -> per-GPU decode throughput of every system vs the baseline, per SLO, the paper's 2.49x marked
  accel sweep       -> tokens/s per GPU over the swept values (one line per value of the second key)
  accel ablation    -> the variants' decode step, stacked by part
  accel sessions    -> KV hit rate per system (over the load sweep)
  hbf area --vary   -> stack footprint and density over the swept values
  cosmos ssb        -> FC's speedup per query over every system
  serve sweep       -> TTFT and TPOT percentiles against the throughput achieved, and the TTFT CDF per rate
Anything else is refused with exit 2 and the keys the file has. Same input, same bytes.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from plotting import DPI, PNG_METADATA, pyplot  # noqa: E402

plt = pyplot()

PAPER = json.load(open(os.path.join(HERE, "paper_figures.json")))


def fail(msg):
    print(f"plot.py: {msg}", file=sys.stderr)
    sys.exit(2)


def kind_of(j):
    if not isinstance(j, dict):
        return None
    keys = set(j)
    if {"gb_per_s", "modes"} <= keys:
        return "write-bw"
    if {"points", "summary"} <= keys and j["points"] and "workload" in j["points"][0]:
        return "cosmos-eval"
    if {"points", "summary"} <= keys and j["points"] and "tokens_per_s_per_gpu" in j["points"][0]:
        return "accel-eval"
    if {"points", "vary"} <= keys and j["points"] and "area" in j["points"][0]:
        return "hbf-area"
    if {"points", "vary"} <= keys and j["points"] and "tokens_per_s_per_gpu" in j["points"][0]:
        return "accel-sweep"
    if "variants" in keys:
        return "accel-ablation"
    if "systems" in keys and ("loads" in keys or "hit_rate" in str(j.get("systems"))[:2000]):
        return "accel-sessions"
    if "queries" in keys and j["queries"] and "systems" in j["queries"][0]:
        return "cosmos-ssb"
    if {"points"} <= keys and j["points"] and isinstance(j["points"][0], dict) and "cdf" in j["points"][0]:
        return "serve-sweep"
    return None


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, metadata=PNG_METADATA)
    plt.close(fig)


def sweep_lines(ax, points, vary, value, ylabel):
    """One line per value of the second swept key (or one line), x = the first key's values in order."""
    keys = list(vary) if vary else list(points[0]["values"])
    first = keys[0]
    xs = list(dict.fromkeys(p["values"][first] for p in points))
    groups = list(dict.fromkeys(tuple((k, p["values"][k]) for k in keys[1:]) for p in points))
    for g in groups:
        ys = []
        for x in xs:
            match = [p for p in points if p["values"][first] == x and all(p["values"][k] == v for k, v in g)]
            ys.append(value(match[0]) if match else float("nan"))
        ax.plot(range(len(xs)), ys, "o-", label=", ".join(f"{k}={v}" for k, v in g) or None)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_xlabel(first)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if groups and groups[0]:
        ax.legend(fontsize=8)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        sys.exit(2)
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.splitext(src)[0] + ".png"
    try:
        j = json.load(open(src))
    except (OSError, ValueError) as e:
        fail(f"{src}: cannot read JSON ({e})")
    kind = kind_of(j)
    if kind is None:
        keys = ", ".join(sorted(j)[:12]) if isinstance(j, dict) else type(j).__name__
        fail(f"{src}: not a bitline result this script can draw (its top-level keys: {keys}); it draws the JSON of "
             "cosmos eval, cosmos write-bw, cosmos ssb, accel eval, accel sweep, accel ablation, accel sessions, hbf area --vary, serve sweep")
    import plot_cosmos  # noqa: E402  (the Flash-Cosmos charts)
    import plot_accel  # noqa: E402  (the FlashAccel charts)
    if kind == "cosmos-eval":
        plot_cosmos.bars(j, "time_s", "speedup", "speedup over OSP (x)", out)
    elif kind == "write-bw":
        plot_cosmos.write_bw(j, out)
    elif kind == "accel-eval":
        plot_accel.throughput(j, out)
    elif kind == "accel-ablation":
        plot_accel.ablation(j, out)
    elif kind == "accel-sessions":
        plot_accel.hit_rate(j, out)
    elif kind == "accel-sweep":
        pts = [p for p in j["points"] if p.get("feasible")]
        if not pts:
            fail(f"{src}: no feasible point to draw (every point's reason is in the JSON)")
        fig, ax = plt.subplots(figsize=(7, 4.2))
        sweep_lines(ax, pts, j.get("vary"), lambda p: p["tokens_per_s_per_gpu"], "decode tokens/s per GPU")
        ctx = j.get("context", "")
        ctx = ctx.get("name", "") if isinstance(ctx, dict) else ctx
        ax.set_title(f"{j.get('model', '')} on {j.get('system', '')}, context {ctx}, SLO {j.get('slo_ms', 0):g} ms", fontsize=9)
        save(fig, out)
    elif kind == "serve-sweep":
        import plot_serve  # noqa: E402
        plot_serve.sweep(j, out)
    elif kind == "hbf-area":
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        sweep_lines(axes[0], j["points"], j.get("vary"), lambda p: p["area"]["hbf_stack"]["footprint_mm2"], "HBF stack footprint (mm^2)")
        sweep_lines(axes[1], j["points"], j.get("vary"), lambda p: p["area"]["hbf_stack"]["density_gib_per_mm2"], "density (GiB/mm^2)")
        save(fig, out)
    elif kind == "cosmos-ssb":
        qs = j["queries"]
        systems = [s for s in ("osp", "isp", "parabit", "roaring", "row") if all(s in q["systems"] for q in qs)]
        if "fc" not in qs[0]["systems"] or not systems:
            fail(f"{src}: the queries were not run on fc and another system; nothing to compare")
        fig, ax = plt.subplots(figsize=(11, 4.2))
        width = 0.8 / len(systems)
        for i, s in enumerate(systems):
            ax.bar([x + i * width for x in range(len(qs))],
                   [q["systems"][s]["time_s"] / q["systems"]["fc"]["time_s"] for q in qs], width, label=f"FC vs {s}")
        ax.axhline(1.0, color="k", lw=1)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(qs))], [q["name"] for q in qs])
        ax.set_yscale("log")
        ax.set_ylabel("FC's speedup (x)")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        save(fig, out)
    print(f"plot.py: {kind} -> {out}")


if __name__ == "__main__":
    main()
