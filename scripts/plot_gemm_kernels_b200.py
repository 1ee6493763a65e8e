#!/usr/bin/env python3
"""Chart of the GEMM kernel model against measured B200 kernel durations (matplotlib, Debian python3-matplotlib; style
of plot_gemm_kernels.py).

  plot_gemm_kernels_b200.py GEMM.json OUTDIR

GEMM.json is results/gemm-kernels-b200.json, written by `scripts/validation.py docs` (`make validate`): each row of
scripts/paper_figures.json's "kernels_b200" (precision, M x K x N, the measured us) with the model's time (`accel
gemm --system b200`). Writes OUTDIR/gemm-kernels-b200.png (byte-for-byte the same for the same input): one panel per
precision, bitline against the measured duration of every kernel (log-log, the identity and the +-20% band), coloured
by regime. The table and the source are in docs/calibration.md ("On a B200").
"""
import json
import os
import sys

from plotting import identity_panel, pyplot, save  # noqa: E402

plt = pyplot()

PRECISIONS = (("bf16", "BF16"), ("fp8", "FP8"), ("fp4", "NVFP4"))
REGIMES = (("1-16 rows (weight streaming)", lambda m: m <= 16, "tab:blue"),
           ("128-512 rows", lambda m: 16 < m <= 512, "tab:orange"),
           ("1,024-8,192 rows (compute)", lambda m: m > 512, "tab:green"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))["rows"]
    if not rows:
        sys.exit(f"plot_gemm_kernels_b200.py: {sys.argv[1]} has no rows")
    os.makedirs(sys.argv[2], exist_ok=True)
    lo = min(min(r["us"], r["model_us"]) for r in rows) / 1.5
    hi = max(max(r["us"], r["model_us"]) for r in rows) * 1.5
    fig, axes = plt.subplots(1, len(PRECISIONS), figsize=(18, 6))
    for a, (prec, label) in zip(axes, PRECISIONS):
        identity_panel(a, lo, hi)
        for name, inside, color in REGIMES:
            sel = [r for r in rows if r["precision"] == prec and inside(r["m"])]
            a.scatter([r["us"] for r in sel], [r["model_us"] for r in sel], s=16, color=color, label=f"{name}: {len(sel)}",
                      zorder=3)
        a.set_xlabel(f"measured kernel duration (us; B200, {label}, TensorRT-LLM 1.2)")
        a.set_ylabel("bitline (accel gemm --system b200, us)")
        a.set_title(f"{label} Linear layers, 1-8,192 rows")
        a.legend(fontsize=8, loc="upper left")
    out = os.path.join(sys.argv[2], "gemm-kernels-b200.png")
    save(fig, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
