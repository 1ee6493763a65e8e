#!/usr/bin/env python3
"""Charts of the Flash-Cosmos results against the paper (matplotlib, Debian python3-matplotlib).

  plot_cosmos.py EVAL_JSON WRITE_BW_JSON OUT_DIR

Writes, each with the paper's published value beside bitline's (Park et al., Flash-Cosmos, MICRO 2022,
arXiv 2209.05566: the averages of its evaluation and abstract, scripts/paper_figures.json), byte-for-byte the same
for the same inputs:
  cosmos-vs-paper.png   the headline averages (speedup and energy efficiency of FC over OSP, ISP, ParaBit)
  cosmos-speedup.png    per workload and input size, the four systems' speedup over OSP (log scale), the paper's
                        average FC/OSP gain dashed; beside, FC's gain over OSP, ISP and ParaBit averaged over the
                        workloads, the paper's averages (32x, 25x, 3.5x) beside bitline's
  cosmos-energy.png     the same for energy efficiency (the paper: 95x over OSP, 3.3x over ParaBit, none over ISP)
  cosmos-write-bw.png   sequential write bandwidth per program mode, both MLC/TLC programming schemes, the
                        paper's ESP figure beside
bitline's averages are the eval's summary (`overall`): as docs/validation.md, the arithmetic mean over a workload's
points, then the geometric mean over the workloads.
Exits 2 with a message when an input is not the JSON of `cosmos eval` / `cosmos write-bw`.
"""
import json
import os
import sys

from plotting import entries, legend_below, pyplot, save  # noqa: E402

plt = pyplot()

from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER = json.load(open(os.path.join(HERE, "paper_figures.json")))["flash_cosmos"]
PAPER_LABEL = "paper (Flash-Cosmos, MICRO 2022)"
SYSTEMS = ["osp", "isp", "parabit", "fc"]
WORKLOADS = [("bmi", "months"), ("ims", "images"), ("kcs", "k")]
COLORS = {"osp": "#9e9e9e", "isp": "#6a9fd4", "parabit": "#e0a040", "fc": "#3a8a3a"}
NAMES = {"osp": "OSP", "isp": "ISP", "parabit": "ParaBit", "fc": "FC"}
PAPER_COLOR = "#bbbbbb"
# FC's gains the paper reports as averages over its workloads (speedup over all three; energy efficiency without ISP).
PAIRS = ("fc/osp", "fc/isp", "fc/parabit")
# metric of the summary -> (the point's field a ratio is taken of, the y label of its bars)
METRICS = {"speedup": ("time_s", "speedup over OSP (x)"),
           "energy_efficiency": ("energy_j", "energy efficiency over OSP (x)")}


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


def averages(ev, metric):
    """[(pair, the paper's average or None, bitline's or None)] of FC's gain over each system in PAIRS for `metric`
    (speedup, energy_efficiency). bitline's is the summary's `overall`, the mean docs/validation.md compares
    (scripts/validation.py): the arithmetic mean over each workload's points, the geometric mean over the workloads."""
    summary = ev.get("summary", {}).get(metric, {})
    return [(pair, PAPER[metric].get(pair), summary.get(pair, {}).get("overall")) for pair in PAIRS]


def gain_bars(ax, xs, values, offset, label, color, fmt, **kw):
    """Bars of FC's gains at xs + offset (a value of None: no bar), each labelled with its value above it."""
    drawn = [(x + offset, v) for x, v in zip(xs, values) if v is not None]
    ax.bar([x for x, _ in drawn], [v for _, v in drawn], 0.4, label=label, color=color, **kw)
    for x, v in drawn:
        ax.text(x, v * 1.08, fmt(v), ha="center", fontsize=8)


def headline(ev, path):
    """The paper's averages beside bitline's (same means: per-workload mean, geometric mean over the workloads)."""
    rows = []
    for metric, label in (("speedup", "speedup"), ("energy_efficiency", "energy efficiency")):
        for pair, published, model in averages(ev, metric):
            if published is not None and model is not None:
                rows.append((f"{label}\n{pair}", published, model))
    if not rows:
        fail("the eval's summary has none of the paper's pairs (fc/osp, fc/isp, fc/parabit)")
    fig, ax = plt.subplots(figsize=(9, 4.4))
    xs = range(len(rows))
    gain_bars(ax, xs, [r[1] for r in rows], -0.2, PAPER_LABEL, PAPER_COLOR, lambda v: f"{v:g}x", edgecolor="k")
    gain_bars(ax, xs, [r[2] for r in rows], 0.2, "bitline", COLORS["fc"], lambda v: f"{v:.3g}x")
    ax.set_xticks(list(xs), [r[0] for r in rows], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(top=max(max(r[1], r[2]) for r in rows) * 1.5)  # room for the labels above the tallest bars
    plain_log_ticks(ax)
    ax.set_ylabel("FC's gain (x)")
    acc = ev.get("config", {}).get("cosmos", {}).get("energy_accounting", "?")
    ax.set_title(f"Flash-Cosmos averages over BMI, IMS, KCS: paper vs bitline (energy accounting: {acc})", fontsize=9)
    # Below the panel: inside, it covered the tallest bars' labels.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    save(fig, path)


def average_panel(ax, ev, metric):
    """FC's gain over each system of PAIRS averaged over the workloads: the paper's average (grey) beside bitline's
    (averages()); a pair the paper gives no figure for says so where its bar would be."""
    rows = averages(ev, metric)
    xs = range(len(rows))
    gain_bars(ax, xs, [p for _, p, _ in rows], -0.2, f"{PAPER_LABEL}: average", PAPER_COLOR, lambda v: f"{v:g}x",
              edgecolor="k")
    gain_bars(ax, xs, [m for _, _, m in rows], 0.2, "bitline: average (mean per workload, geomean of the workloads)",
              COLORS["fc"], lambda v: f"{v:.3g}x")
    shown = [v for r in rows for v in r[1:] if v is not None]
    bottom = min(shown + [1.0]) / 1.6
    for x, (_, p, m) in zip(xs, rows):
        for offset, v, what in ((-0.2, p, "none published"), (0.2, m, "n/a")):
            if v is None:
                ax.text(x + offset, bottom * 1.1, what, rotation=90, ha="center", va="bottom", fontsize=7, color="0.4")
    ax.set_xticks(list(xs), [NAMES[pair.split("/")[1]] for pair in PAIRS])
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_yscale("log")
    ax.set_ylim(bottom, max(shown + [1.0]) * 2.0)  # room for the labels above the bars
    plain_log_ticks(ax)
    ax.set_xlabel("FC's gain over")
    ax.set_title("average over the workloads", fontsize=9)
    ax.set_ylabel("FC's gain (x)")
    ax.grid(axis="y", alpha=0.3)


def bars(ev, metrics, path):
    """A row of panels per metric of METRICS: per workload, each input size's bars of the four systems over OSP, the
    paper's FC/OSP average dashed across; last, average_panel (the paper's averages of FC over OSP, ISP, ParaBit)."""
    data = {metric: per_point(ev, METRICS[metric][0]) for metric in metrics}
    workloads = [wp for wp in WORKLOADS if wp[0] in data[metrics[0]]]
    if not workloads:
        fail("the eval has no workload with OSP among its systems (every bar is normalised to OSP)")
    fig, axes = plt.subplots(len(metrics), len(workloads) + 1, figsize=(4.4 * len(workloads) + 3.4, 4.2 * len(metrics)),
                             squeeze=False, gridspec_kw={"width_ratios": [1.0] * len(workloads) + [0.75]})
    for row, metric in zip(axes, metrics):
        for ax, (w, param) in zip(row, workloads):
            vals, series = data[metric][w]
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
        row[0].set_ylabel(METRICS[metric][1])
        average_panel(row[-1], ev, metric)
    # Under the panels: bitline's four systems, then the paper's figures (each row's FC/OSP line) and the averages.
    per_point_entries = list(dict((label, (h, label)) for row in axes for h, label in entries(row[0])).values())
    averaged = entries(axes[0][-1])
    rect = legend_below(fig, [[e for e in per_point_entries if e[1].startswith("bitline ")],
                              [e for e in per_point_entries if not e[1].startswith("bitline ")] + averaged])
    save(fig, path, rect=rect)


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
    save(fig, path)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    ev = load(sys.argv[1], ("points", "summary"), "`bitline cosmos eval`")
    wb = load(sys.argv[2], ("gb_per_s", "modes"), "`bitline cosmos write-bw`")
    out = sys.argv[3]
    os.makedirs(out, exist_ok=True)
    headline(ev, os.path.join(out, "cosmos-vs-paper.png"))
    bars(ev, ["speedup"], os.path.join(out, "cosmos-speedup.png"))
    bars(ev, ["energy_efficiency"], os.path.join(out, "cosmos-energy.png"))
    write_bw(wb, os.path.join(out, "cosmos-write-bw.png"))
    print(f"wrote {out}/cosmos-vs-paper.png, cosmos-speedup.png, cosmos-energy.png, cosmos-write-bw.png")


if __name__ == "__main__":
    main()
