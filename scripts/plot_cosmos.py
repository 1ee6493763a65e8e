#!/usr/bin/env python3
"""Charts of the Flash-Cosmos results against the paper (matplotlib, Debian python3-matplotlib).

  plot_cosmos.py EVAL_JSON WRITE_BW_JSON OUT_DIR

Writes, each with the paper's published value beside bitline's (Park et al., Flash-Cosmos, MICRO 2022,
arXiv 2209.05566: the averages of its evaluation and abstract, scripts/paper_figures.json):
  cosmos-vs-paper.png   the headline averages (speedup and energy efficiency of FC over OSP, ISP, ParaBit)
  cosmos-speedup.png    per workload and input size, the four systems' speedup over OSP (log scale), the paper's
                        average FC/OSP and FC/ParaBit gains dashed
  cosmos-energy.png     the same for energy efficiency
  cosmos-write-bw.png   sequential write bandwidth per program mode, both MLC/TLC programming schemes, the
                        paper's ESP figure beside
Exits 2 with a message when an input is not the JSON of `cosmos eval` / `cosmos write-bw`.
"""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER = json.load(open(os.path.join(HERE, "paper_figures.json")))["flash_cosmos"]
PAPER_LABEL = "paper (Flash-Cosmos, MICRO 2022)"
SYSTEMS = ["osp", "isp", "parabit", "fc"]
WORKLOADS = [("bmi", "months"), ("ims", "images"), ("kcs", "k")]
COLORS = {"osp": "#9e9e9e", "isp": "#6a9fd4", "parabit": "#e0a040", "fc": "#3a8a3a"}


def fail(msg):
    print(f"plot_cosmos.py: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path, keys, what):
    try:
        j = json.load(open(path))
    except (OSError, ValueError) as e:
        fail(f"{path}: cannot read JSON ({e})")
    for k in keys:
        if k not in j:
            fail(f"{path}: no '{k}': not the JSON of {what}")
    return j


def plain_log_ticks(ax):
    """Log axis with plain numbers (1, 2, 5, 10, ...) instead of 2x10^0."""
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=()))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))


def per_point(ev, key):
    pts = {(p["workload"], list(p["param"].values())[0], p["system"]): p for p in ev["points"]}
    out = {}
    for w, _ in WORKLOADS:
        vals = sorted({v for (ww, v, _) in pts if ww == w})
        systems = [s for s in SYSTEMS if all((w, v, s) in pts for v in vals)]
        if not vals or "osp" not in systems:
            continue
        out[w] = (vals, {s: [pts[(w, v, "osp")][key] / pts[(w, v, s)][key] for v in vals] for s in systems})
    return out


def headline(ev, path):
    """The paper's averages beside bitline's (same means: per-workload mean, geometric mean over the workloads)."""
    rows = []
    for metric, label in (("speedup", "speedup"), ("energy_efficiency", "energy efficiency")):
        for pair, published in PAPER[metric].items():
            model = ev["summary"].get(metric, {}).get(pair, {}).get("overall")
            if model is not None:
                rows.append((f"{label}\n{pair}", published, model))
    if not rows:
        fail("the eval's summary has none of the paper's pairs (fc/osp, fc/isp, fc/parabit)")
    fig, ax = plt.subplots(figsize=(9, 4.2))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[1] for r in rows], 0.4, label=PAPER_LABEL, color="#bbbbbb", edgecolor="k")
    ax.bar([x + 0.2 for x in xs], [r[2] for r in rows], 0.4, label="bitline", color=COLORS["fc"])
    for x, (_, p, m) in zip(xs, rows):
        ax.text(x - 0.2, p * 1.08, f"{p:g}x", ha="center", fontsize=8)
        ax.text(x + 0.2, m * 1.08, f"{m:.3g}x", ha="center", fontsize=8)
    ax.set_xticks(list(xs), [r[0] for r in rows], fontsize=8)
    ax.set_yscale("log")
    plain_log_ticks(ax)
    ax.set_ylabel("FC's gain (x)")
    acc = ev.get("config", {}).get("cosmos", {}).get("energy_accounting", "?")
    ax.set_title(f"Flash-Cosmos averages over BMI, IMS, KCS: paper vs bitline (energy accounting: {acc})", fontsize=9)
    ax.legend(loc="upper center", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def bars(ev, key, metric, ylabel, path):
    data = per_point(ev, key)
    if not data:
        fail("the eval has no workload with OSP among its systems (every bar is normalised to OSP)")
    fig, axes = plt.subplots(1, len(data), figsize=(4.4 * len(data), 4.2), squeeze=False)
    for ax, (w, param) in zip(axes[0], [wp for wp in WORKLOADS if wp[0] in data]):
        vals, series = data[w]
        width = 0.8 / len(series)
        for i, (s, ys) in enumerate(series.items()):
            ax.bar([x + i * width for x in range(len(vals))], ys, width, label=f"bitline {s}", color=COLORS[s])
        # The paper reports averages over all workloads, not per point: dashed, labelled as such.
        fc_osp = PAPER[metric].get("fc/osp")
        if fc_osp:
            ax.axhline(fc_osp, color="k", ls="--", lw=1, label=f"{PAPER_LABEL}: FC/OSP average {fc_osp:g}x")
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(vals))], [str(v) for v in vals])
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_xlabel(f"{w.upper()}: {param}")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_bw(wb, path):
    modes = [m for m in ("slc", "esp", "mlc", "tlc") if m in wb["modes"]]
    scheme = wb.get("multi_bit_program", "page_by_page")
    other = "one_shot" if scheme == "page_by_page" else "page_by_page"
    fig, ax = plt.subplots(figsize=(7, 4.2))
    main = [wb["modes"][m]["gb_per_s"] for m in modes]
    alt = [wb["modes"][m].get(f"{other}_gb_per_s", float("nan")) for m in modes]
    ax.bar([x - 0.2 for x in range(len(modes))], main, 0.4, label=f"bitline, {scheme.replace('_', ' ')} (configured)", color=COLORS["fc"])
    ax.bar([x + 0.2 for x in range(len(modes))], alt, 0.4, label=f"bitline, {other.replace('_', ' ')}", color="#a6cfa6")
    if "esp" in modes:
        x = modes.index("esp")
        ax.plot([x - 0.45, x + 0.45], [PAPER["esp_write_gb_per_s"]] * 2, color="k", ls="--", lw=1.5,
                label=f"{PAPER_LABEL}: ESP {PAPER['esp_write_gb_per_s']:g} GB/s")
    ax.set_xticks(range(len(modes)), [m.upper() for m in modes])
    ax.set_ylabel("sequential write (GB/s)")
    ax.set_ylim(0, max(main + [a for a in alt if a == a]) * 1.35)
    ax.legend(loc="upper center", ncol=2, fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    ev = load(sys.argv[1], ("points", "summary"), "`bitline cosmos eval`")
    wb = load(sys.argv[2], ("gb_per_s", "modes"), "`bitline cosmos write-bw`")
    out = sys.argv[3]
    os.makedirs(out, exist_ok=True)
    headline(ev, os.path.join(out, "cosmos-vs-paper.png"))
    bars(ev, "time_s", "speedup", "speedup over OSP (x)", os.path.join(out, "cosmos-speedup.png"))
    bars(ev, "energy_j", "energy_efficiency", "energy efficiency over OSP (x)", os.path.join(out, "cosmos-energy.png"))
    write_bw(wb, os.path.join(out, "cosmos-write-bw.png"))
    print(f"wrote {out}/cosmos-vs-paper.png, cosmos-speedup.png, cosmos-energy.png, cosmos-write-bw.png")


if __name__ == "__main__":
    main()
