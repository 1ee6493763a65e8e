#!/usr/bin/env python3
"""Charts of the Flash-Cosmos results (matplotlib, Debian python3-matplotlib).

  plot_cosmos.py EVAL_JSON WRITE_BW_JSON OUT_DIR

Writes cosmos-speedup.png and cosmos-energy.png (per workload and input size, the four systems normalised to
OSP, log scale) and cosmos-write-bw.png (sequential write bandwidth per program mode, both programming schemes).
"""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SYSTEMS = ["osp", "isp", "parabit", "fc"]
WORKLOADS = [("bmi", "months"), ("ims", "images"), ("kcs", "k")]


def per_point(ev, key):
    pts = {(p["workload"], list(p["param"].values())[0], p["system"]): p for p in ev["points"]}
    out = {}
    for w, _ in WORKLOADS:
        vals = sorted({v for (ww, v, _) in pts if ww == w})
        out[w] = (vals, {s: [pts[(w, v, "osp")][key] / pts[(w, v, s)][key] for v in vals] for s in SYSTEMS})
    return out


def bars(ev, key, ylabel, path):
    data = per_point(ev, key)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, (w, param) in zip(axes, WORKLOADS):
        vals, series = data[w]
        width = 0.8 / len(SYSTEMS)
        for i, s in enumerate(SYSTEMS):
            ax.bar([x + i * width for x in range(len(vals))], series[s], width, label=s)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(vals))], [str(v) for v in vals])
        ax.set_yscale("log")
        ax.set_xlabel(f"{w.upper()}: {param}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_bw(wb, path):
    modes = ["slc", "esp", "mlc", "tlc"]
    fig, ax = plt.subplots(figsize=(6, 4))
    one = [wb["modes"][m]["gb_per_s"] for m in modes]
    per_page = [wb["modes"][m]["page_by_page_gb_per_s"] for m in modes]
    ax.bar([x - 0.2 for x in range(4)], one, 0.4, label="one-shot (default)")
    ax.bar([x + 0.2 for x in range(4)], per_page, 0.4, label="page by page")
    ax.axhline(4.7, color="k", ls="--", lw=1, label="paper: ESP 4.7 GB/s")
    ax.set_xticks(range(4), [m.upper() for m in modes])
    ax.set_ylabel("sequential write (GB/s)")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    ev, wb = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    out = sys.argv[3]
    os.makedirs(out, exist_ok=True)
    bars(ev, "time_s", "speedup over OSP", os.path.join(out, "cosmos-speedup.png"))
    bars(ev, "energy_j", "energy efficiency over OSP", os.path.join(out, "cosmos-energy.png"))
    write_bw(wb, os.path.join(out, "cosmos-write-bw.png"))
    print(f"wrote {out}/cosmos-speedup.png, cosmos-energy.png, cosmos-write-bw.png")


if __name__ == "__main__":
    main()
