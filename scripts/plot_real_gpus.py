#!/usr/bin/env python3
"""Chart of the GPU model against published measurements on real GPUs (matplotlib, Debian python3-matplotlib; style of
plot_accel.py).

  plot_real_gpus.py REAL.json OUTDIR

REAL.json is results/real-gpus.json, written by `scripts/validation.py docs` (`make validate`): each row of
scripts/paper_figures.json's "real_gpus" with the model's value (`accel run --static-batch`) and its deviation.
Writes OUTDIR/real-gpus.png (byte-for-byte the same for the same input): left, bitline against the measurement for
every row (log-log, the identity and the +-20% band); right, each row's deviation, with the issue's targets (median
within 10%, none beyond 20%) as bands. The table with sources is in docs/calibration.md ("Against measurements on real GPUs").
"""
import json
import os
import sys

from plotting import pyplot, save  # noqa: E402

plt = pyplot()

METRICS = {"tokens_per_s_per_gpu": ("output tokens/s per GPU", "tab:blue", "o"),
           "ttft_ms": ("first-token latency (ms)", "tab:orange", "s"),
           "latency_ms": ("whole request (ms)", "tab:green", "^")}
SHORT = {"llama2-70b": "70B", "llama2-7b": "7B", "gpt-j-6b": "GPT-J"}


def label(r):
    what = "tok/s" if r["metric"] == "tokens_per_s_per_gpu" else ("TTFT" if r["metric"] == "ttft_ms" else "request")
    return (f"{r['kind'].upper()} {SHORT.get(r['model'], r['model'])} {r['precision'].upper()} B{r['batch']} "
            f"x{r['gpus']} {r['input']}/{r['output']} {what} [{r['source']}]")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data = json.load(open(sys.argv[1]))
    rows, mx, med = data["rows"], data["max_target"], data["median_target"]
    if not rows:
        sys.exit(f"plot_real_gpus.py: {sys.argv[1]} has no rows")
    os.makedirs(sys.argv[2], exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(15, 0.32 * len(rows) + 2.5), gridspec_kw={"width_ratios": [1, 1.3]})
    lo = min(min(r["measured"], r["model_value"]) for r in rows) / 1.5
    hi = max(max(r["measured"], r["model_value"]) for r in rows) * 1.5
    a.plot([lo, hi], [lo, hi], color="black", lw=1, label="bitline = measured")
    a.fill_between([lo, hi], [lo * (1 - mx), hi * (1 - mx)], [lo * (1 + mx), hi * (1 + mx)], color="0.85",
                   label=f"within {mx:.0%}")
    for key, (name, color, marker) in METRICS.items():
        pts = [r for r in rows if r["metric"] == key]
        if pts:
            a.scatter([r["measured"] for r in pts], [r["model_value"] for r in pts], color=color, marker=marker,
                      label=name, zorder=3)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlim(lo, hi)
    a.set_ylim(lo, hi)
    a.set_xlabel("published measurement")
    a.set_ylabel("bitline (accel run --static-batch)")
    a.set_title("bitline against real GPUs (each metric in its own unit)")
    a.legend(fontsize=8, loc="upper left")
    ys = list(range(len(rows)))[::-1]
    b.axvspan(-100 * mx, 100 * mx, color="0.92", label=f"+-{mx:.0%} (none beyond)")
    b.axvspan(-100 * med, 100 * med, color="0.82", label=f"+-{med:.0%} (the median's target)")
    b.barh(ys, [100 * r["deviation"] for r in rows], color=[METRICS[r["metric"]][1] for r in rows])
    for y, r in zip(ys, rows):
        d = 100 * r["deviation"]
        b.text(d + (1 if d >= 0 else -1), y, f"{d:+.1f}%", va="center", ha="left" if d >= 0 else "right", fontsize=7)
    b.axvline(0, color="black", lw=0.8)
    b.set_yticks(ys)
    b.set_yticklabels([label(r) for r in rows], fontsize=7)
    lim = max(60.0, max(abs(100 * r["deviation"]) for r in rows) + 12)
    b.set_xlim(-lim, lim)
    b.set_xlabel("deviation of bitline from the measurement (%)")
    devs = sorted(abs(r["deviation"]) for r in rows)
    n = len(devs)
    m = devs[n // 2] if n % 2 else (devs[n // 2 - 1] + devs[n // 2]) / 2
    b.set_title(f"{n} rows: median |deviation| {m:.1%}, largest {devs[-1]:.1%}, "
                f"{sum(1 for x in devs if x <= mx)} within {mx:.0%}")
    b.legend(fontsize=8, loc="lower right")
    path = os.path.join(sys.argv[2], "real-gpus.png")
    save(fig, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
