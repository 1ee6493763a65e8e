#!/usr/bin/env python3
"""Chart of the collective model against measured NCCL all-reduce times (matplotlib, Debian python3-matplotlib; style
of plot_attention_kernels.py).

  plot_collective_kernels.py COLLECTIVES.json OUTDIR

COLLECTIVES.json is results/collective-kernels.json, written by `scripts/validation.py docs` (`make validate`): each
measured all-reduce of scripts/paper_figures.json's "collective_kernels" (Vidur's profile of a DGX H100: GPUs, bytes,
us) with the model's time (`accel collective`). Writes OUTDIR/collective-kernels.png (byte-for-byte the same for the
same input): one panel, bus bandwidth against the message size, the measured points and bitline's line for each group
size. The table is in docs/calibration.md ("Collectives against measured times").
"""
import json
import os
import sys

from plotting import DPI, PNG_METADATA, pyplot  # noqa: E402

plt = pyplot()

COLORS = {2: "tab:blue", 4: "tab:orange", 8: "tab:green"}


def busbw(gpus, size, us):
    """nccl-tests' all-reduce bus bandwidth, GB/s: 2 (n-1)/n x S / t."""
    return 2.0 * (gpus - 1) / gpus * size / (us * 1e-6) / 1e9


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))["rows"]
    if not rows:
        sys.exit(f"plot_collective_kernels.py: {sys.argv[1]} has no rows")
    os.makedirs(sys.argv[2], exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for g in sorted({r["gpus"] for r in rows}):
        sel = sorted((r for r in rows if r["gpus"] == g), key=lambda r: r["bytes"])
        x = [r["bytes"] / 1048576 for r in sel]
        color = COLORS.get(g, "tab:gray")
        ax.scatter(x, [busbw(g, r["bytes"], r["us"]) for r in sel], s=36, color=color, alpha=0.6,
                   label=f"measured (NCCL), {g} GPUs")
        ax.plot(x, [busbw(g, r["bytes"], r["model_us"]) for r in sel], marker="o", ms=3, color=color,
                label=f"bitline, {g} GPUs")
    ax.set_xscale("log", base=2)
    ax.set_xticks([r["bytes"] / 1048576 for r in rows if r["gpus"] == rows[0]["gpus"]])
    ax.set_xticklabels([f"{r['bytes'] // 1048576} MiB" for r in rows if r["gpus"] == rows[0]["gpus"]])
    ax.set_xlabel("all-reduce message size")
    ax.set_ylabel("bus bandwidth, GB/s (nccl-tests' definition)")
    ax.set_title("all-reduce on a DGX H100: Vidur's measured NCCL times and bitline's h100 kind\n"
                 "(bitline's busbw curve is the same for every group size: its lines overlap)", fontsize=10)
    ax.grid(color="0.9")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    out = os.path.join(sys.argv[2], "collective-kernels.png")
    fig.savefig(out, dpi=DPI, metadata=PNG_METADATA)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
