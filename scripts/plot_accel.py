#!/usr/bin/env python3
"""Draws the FlashAccel charts as SVG (standard library only, no plotting package).

  plot_accel.py EVAL.json ABLATION.json SESSIONS.json OUTDIR

Writes OUTDIR/accel-throughput.svg (per-GPU decode throughput vs 8 x H200 at
both SLOs), accel-ablation.svg (step latency breakdown of the ablation
variants), accel-hit-rate.svg (multi-turn KV hit rate) and accel-energy.svg
(tokens per joule vs 8 x H200).
"""
import json
import os
import sys

COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"]


def bars(title, labels, series, ylabel, path, stacked=False):
    """series: list of (name, [value per label])."""
    W, H, L, B, T = 760, 380, 70, 90, 40
    n = len(labels)
    if stacked:
        top = max(sum(s[1][i] for s in series) for i in range(n))
    else:
        top = max(max(v for v in s[1]) for s in series)
    top = top * 1.1 if top > 0 else 1.0
    plot_w, plot_h = W - L - 20, H - B - T
    group = plot_w / n
    k = 1 if stacked else len(series)
    bw = group * 0.8 / k
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<text x="15" y="{T + plot_h/2}" transform="rotate(-90 15 {T + plot_h/2})" text-anchor="middle">{ylabel}</text>']
    for t in range(6):
        v = top * t / 5
        y = T + plot_h - plot_h * t / 5
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W-20}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L-5}" y="{y+4:.1f}" text-anchor="end">{v:.3g}</text>')
    for i, lab in enumerate(labels):
        x0 = L + group * i + group * 0.1
        base = 0.0
        for j, (name, vals) in enumerate(series):
            v = vals[i]
            h = plot_h * v / top
            x = x0 if stacked else x0 + j * bw
            y = T + plot_h - h - (plot_h * base / top if stacked else 0)
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" height="{h:.1f}" fill="{COLORS[j % len(COLORS)]}"/>')
            if stacked:
                base += v
        out.append(f'<text x="{L + group*i + group/2:.1f}" y="{T + plot_h + 14}" text-anchor="end" '
                   f'transform="rotate(-30 {L + group*i + group/2:.1f} {T + plot_h + 14})">{lab}</text>')
    for j, (name, _) in enumerate(series):
        out.append(f'<rect x="{L + 110*j}" y="{H-18}" width="10" height="10" fill="{COLORS[j % len(COLORS)]}"/>')
        out.append(f'<text x="{L + 110*j + 14}" y="{H-9}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    ev, ab, se = (json.load(open(p)) for p in sys.argv[1:4])
    outdir = sys.argv[4]
    os.makedirs(outdir, exist_ok=True)
    thr, tpj = ev["summary"]["throughput_vs_h200x8"], ev["summary"]["tokens_per_j_vs_h200x8"]
    systems = sorted({k.split("@")[0] for k in thr}, key=lambda s: (s[:3], int(s.split("x")[1])))
    slos = sorted({int(k.split("@")[1]) for k in thr})
    get = lambda table, s, slo: table.get(f"{s}@{slo}", {}).get("mean", 0.0)
    bars("Per-GPU decode throughput vs 8 x H200 (mean over feasible points)", systems,
         [(f"SLO {slo} ms", [get(thr, s, slo) for s in systems]) for slo in slos], "x 8 x H200",
         os.path.join(outdir, "accel-throughput.svg"))
    bars("Tokens per joule vs 8 x H200", systems, [(f"SLO {slo} ms", [get(tpj, s, slo) for s in systems]) for slo in slos],
         "x 8 x H200", os.path.join(outdir, "accel-energy.svg"))
    variants = list(ab["variants"].keys())
    parts = sorted({p for v in ab["variants"].values() for p in v["breakdown_ms"]})
    bars(f"Ablation: decode step of {ab['model']}, batch {ab['batch_per_rank']} per rank (critical-path breakdown)", variants,
         [(p, [ab["variants"][v]["breakdown_ms"].get(p, 0.0) for v in variants]) for p in parts], "ms",
         os.path.join(outdir, "accel-ablation.svg"), stacked=True)
    ss = list(se["systems"].keys())
    bars("Multi-turn sessions: KV hit rate", ss, [("hit rate", [se["systems"][s]["hit_rate"] for s in ss])], "fraction",
         os.path.join(outdir, "accel-hit-rate.svg"))
    print(f"wrote 4 charts to {outdir}")


if __name__ == "__main__":
    main()
