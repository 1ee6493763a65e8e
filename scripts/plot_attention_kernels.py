#!/usr/bin/env python3
"""Chart of the prefill attention kernel model against FlashAttention-3's published speeds (matplotlib, Debian
python3-matplotlib; style of plot_gemm_kernels.py).

  plot_attention_kernels.py ATTENTION.json OUTDIR

ATTENTION.json is results/attention-kernels.json, written by `scripts/validation.py docs` (`make validate`): each bar
of scripts/paper_figures.json's "attention_kernels" (FlashAttention-3, arXiv 2407.08608, Fig. 5: H100 SXM5, FP16
forward; head dim, mask, tokens) with the model's speed (`accel attention`). Writes OUTDIR/attention-kernels.png
(byte-for-byte the same for the same input): one panel per mask, TFLOP/s against the sequence length, the paper's
bars and bitline's line for each head dim; the two points that set parameters are ringed. The table is in docs/calibration.md
("Attention kernels against FlashAttention-3's figures").
"""
import json
import os
import sys

from plotting import DPI, PNG_METADATA, pyplot  # noqa: E402

plt = pyplot()

COLORS = {64: "tab:blue", 128: "tab:orange", 256: "tab:green"}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))["rows"]
    if not rows:
        sys.exit(f"plot_attention_kernels.py: {sys.argv[1]} has no rows")
    os.makedirs(sys.argv[2], exist_ok=True)
    masks = [m for m in ("none", "causal") if any(r["mask"] == m for r in rows)]
    fig, axes = plt.subplots(1, len(masks), figsize=(7 * len(masks), 5.5), sharey=True, squeeze=False)
    dims = sorted({r["head_dim"] for r in rows})
    for ax, mask in zip(axes[0], masks):
        n = len(dims)
        for j, d in enumerate(dims):
            sel = sorted((r for r in rows if r["mask"] == mask and r["head_dim"] == d), key=lambda r: r["tokens"])
            if not sel:
                continue
            x = list(range(len(sel)))
            width = 0.8 / n
            off = (j - (n - 1) / 2) * width
            color = COLORS.get(d, "tab:gray")
            ax.bar([i + off for i in x], [r["measured_tflops"] for r in sel], width, color=color, alpha=0.35,
                   label=f"FlashAttention-3, head dim {d}")
            ax.plot([i + off for i in x], [r["model_tflops"] for r in sel], marker="o", ms=4, color=color,
                    label=f"bitline, head dim {d}")
            anchors = [(i + off, r["model_tflops"]) for i, r in zip(x, sel) if r["sets_a_parameter"]]
            if anchors:
                ax.scatter([a for a, _ in anchors], [v for _, v in anchors], s=110, facecolors="none", edgecolors="black",
                           zorder=4, label="sets a parameter")
            ax.set_xticks(x)
            ax.set_xticklabels([f"{r['tokens'] // 1024}k" if r["tokens"] >= 1024 else str(r["tokens"]) for r in sel])
        ax.set_xlabel("sequence length (batch x length = 16k tokens)")
        ax.set_title(f"prefill attention, {'causal mask' if mask == 'causal' else 'no mask'} (H100 SXM5, FP16)")
        ax.grid(axis="y", color="0.9")
    axes[0][0].set_ylabel("TFLOP/s")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    out = os.path.join(sys.argv[2], "attention-kernels.png")
    fig.savefig(out, dpi=DPI, metadata=PNG_METADATA)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
