#!/usr/bin/env python3
"""Chart of the GEMM kernel model against measured H100 kernel durations (matplotlib, Debian python3-matplotlib; style
of plot_real_gpus.py).

  plot_gemm_kernels.py GEMM.json OUTDIR

GEMM.json is results/gemm-kernels.json, written by `scripts/validation.py docs` (`make validate`): each row of
scripts/paper_figures.json's "kernels" (one model, tensor-parallel shard and row count; four projections) with the
model's times (`accel gemm`). Writes OUTDIR/gemm-kernels.png (byte-for-byte the same for the same input): left,
bitline against the measured duration of every kernel (log-log, the identity and the +-20% band), coloured by regime;
right, the deviation against the number of rows, one line per model and shard. The table and the source are in
docs/calibration.md ("GEMM kernels against measured kernel times").
"""
import json
import os
import sys

from plotting import DPI, PNG_METADATA, identity_panel, pyplot  # noqa: E402

plt = pyplot()

OPS = ("qkv", "o", "up", "down")
REGIMES = (("1-16 rows (weight streaming)", lambda t: t <= 16, "tab:blue"),
           ("128-512 rows", lambda t: 16 < t <= 512, "tab:orange"),
           ("1,024-4,096 rows (compute)", lambda t: t > 512, "tab:green"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))["rows"]
    if not rows:
        sys.exit(f"plot_gemm_kernels.py: {sys.argv[1]} has no rows")
    os.makedirs(sys.argv[2], exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 6))
    pts = [(r["tokens"], r["us"][op], r["model_us"][op]) for r in rows for op in OPS]
    lo = min(min(m, v) for _, m, v in pts) / 1.5
    hi = max(max(m, v) for _, m, v in pts) * 1.5
    identity_panel(a, lo, hi)
    for name, inside, color in REGIMES:
        sel = [(m, v) for t, m, v in pts if inside(t)]
        a.scatter([m for m, _ in sel], [v for _, v in sel], s=14, color=color, label=f"{name}: {len(sel)}", zorder=3)
    a.set_xlabel("measured kernel duration (us; H100 SXM, FP16, cuBLAS)")
    a.set_ylabel("bitline (accel gemm, us)")
    a.set_title("GEMM kernels: Llama-2-7B/70B projections, TP 1-8")
    a.legend(fontsize=8, loc="upper left")
    b.axhspan(-20, 20, color="0.92", label="+-20%")
    shards = sorted({(r["model"], r["tp"]) for r in rows})
    cmap = plt.get_cmap("tab10")
    for i, (model, tp) in enumerate(shards):
        sel = sorted((r for r in rows if r["model"] == model and r["tp"] == tp), key=lambda r: r["tokens"])
        toks = [r["tokens"] for r in sel]
        # the mean deviation of the four projections at each row count
        dev = [100 * sum(r["model_us"][op] / r["us"][op] - 1 for op in OPS) / len(OPS) for r in sel]
        b.plot(toks, dev, marker="o", ms=3, color=cmap(i % 10), label=f"{model} TP{tp}")
    b.axhline(0, color="black", lw=0.8)
    b.set_xscale("log", base=2)
    b.set_xlabel("rows (tokens) of the GEMM")
    b.set_ylabel("bitline vs measured, mean of the 4 projections (%)")
    b.set_title("deviation by rows: weight streaming, the 128-512 gap, compute")
    b.legend(fontsize=7, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    out = os.path.join(sys.argv[2], "gemm-kernels.png")
    fig.savefig(out, dpi=DPI, metadata=PNG_METADATA)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
