#!/usr/bin/env python3
"""Chart of the batch's first token and throughput against NVIDIA's inference performance page (matplotlib, Debian
python3-matplotlib; style of plot_real_gpus.py).

  plot_real_gpus_batch.py BATCH.json OUTDIR

BATCH.json is results/real-gpus-batch.json, written by `scripts/validation.py docs` (`make validate`): each row of
scripts/paper_figures.json's "real_gpus_batch" (TensorRT-LLM 0.9.0, H100 SXM, FP8) with the model's value
(`accel run --static-batch`) and its deviation. Writes OUTDIR/real-gpus-batch.png (byte-for-byte the same for the same
input): left, the time to the batch's first token, measured and bitline side by side for every row; right, the output
tokens/s per GPU of the same page. The table with its source is in docs/calibration.md ("The batch's first token").
"""
import json
import os
import sys

from plotting import pyplot, save  # noqa: E402

plt = pyplot()

PANELS = (("batch_ttft_ms", "time to the batch's first token (ms)"), ("tokens_per_s_per_gpu", "output tokens/s per GPU"))
SHORT = {"llama2-7b": "Llama-2-7B", "gpt-j-6b": "GPT-J-6B"}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))["rows"]
    if not rows:
        sys.exit(f"plot_real_gpus_batch.py: {sys.argv[1]} has no rows")
    os.makedirs(sys.argv[2], exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.6))
    for ax, (metric, title) in zip(axes, PANELS):
        pts = [r for r in rows if r["metric"] == metric]
        if not pts:
            ax.set_axis_off()
            continue
        xs = list(range(len(pts)))
        w = 0.38
        ax.bar([x - w / 2 for x in xs], [r["measured"] for r in pts], w, color="0.55", label="measured (NVIDIA)")
        ax.bar([x + w / 2 for x in xs], [r["model_value"] for r in pts], w, color="tab:blue", label="bitline")
        top = max(max(r["measured"], r["model_value"]) for r in pts)
        for x, r in zip(xs, pts):
            ax.text(x + w / 2, r["model_value"] + 0.01 * top, f"{100 * r['deviation']:+.1f}%", ha="center", va="bottom",
                    fontsize=8)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{SHORT.get(r['model'], r['model'])}\nB{r['batch']} {r['input']}/{r['output']}" for r in pts],
                           fontsize=8)
        ax.set_ylim(0, top * 1.3)
        ax.set_ylabel(title)
        mean = sum(abs(r["deviation"]) for r in pts) / len(pts)
        ax.set_title(f"{title}: {len(pts)} rows, mean |deviation| {mean:.1%}", fontsize=10)
        ax.legend(fontsize=8, loc="upper left", ncol=2)
    fig.suptitle("TensorRT-LLM 0.9.0 on an H100 SXM, FP8, static batching (NVIDIA's inference performance page) "
                 "against accel run --static-batch", fontsize=10)
    path = os.path.join(sys.argv[2], "real-gpus-batch.png")
    save(fig, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
