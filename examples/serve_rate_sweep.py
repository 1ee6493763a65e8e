"""A serving rate sweep on two systems, plotted with matplotlib (docs/python.md): the p90 time to first token and
the p99 time per output token against the output tokens/s each rate achieves.

    PYTHONPATH=build/release/python python3 examples/serve_rate_sweep.py results/serve-rate-sweep.png
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import bitline  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "serve-rate-sweep.png"
fig, (ttft, tpot) = plt.subplots(1, 2, figsize=(10, 4))
for system in ("h100x1", "h200x1"):
    r = bitline.serve.sweep(model="llama2-7b", system=system, input=300, output=50, requests=300, rates=[2, 8, 16, 32, 64], quiet=True)
    x = [p["summary"]["output_tokens_per_s"] for p in r["points"]]
    ttft.plot(x, [p["summary"]["ttft_ms"]["p90"] for p in r["points"]], "o-", label=system)
    tpot.plot(x, [p["summary"]["tpot_ms"]["p99"] for p in r["points"]], "o-", label=system)
for ax, what in ((ttft, "p90 time to first token (ms)"), (tpot, "p99 time per output token (ms)")):
    ax.set_xlabel("output tokens/s (achieved)")
    ax.set_ylabel(what)
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
fig.suptitle("llama2-7b, 300-token prompts, 50 output tokens, Poisson arrivals at 2-64 requests/s")
fig.tight_layout()
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
fig.savefig(out, dpi=100)
print(f"wrote {out}")
