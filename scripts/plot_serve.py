#!/usr/bin/env python3
"""Charts of a request-level serving sweep (matplotlib, Debian python3-matplotlib).

  plot_serve.py SWEEP.json OUT.png

SWEEP.json is the output of `bitline serve sweep ... --rates R1,R2,... --json SWEEP.json` (docs/serving.md). One
figure, three panels: the throughput-latency curve (p50/p90/p99 time to first token against the output tokens/s
achieved at each rate), the same for the time per output token, and the CDF of the time to first token at every
rate (from the sweep's 101 quantiles per rate). The SLOs given to the sweep are drawn as dashed lines. Same input,
same bytes. `plot.py SWEEP.json` draws the same.
"""
import json
import sys

from plotting import pyplot, save  # noqa: E402

plt = pyplot()



def is_sweep(j):
    return isinstance(j, dict) and "points" in j and j["points"] and isinstance(j["points"][0], dict) \
        and "cdf" in j["points"][0] and "summary" in j["points"][0]


def sweep(j, out):
    pts = j["points"]
    x = [p["summary"]["output_tokens_per_s"] for p in pts]
    slo = j.get("slo") or {}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for ax, metric, label, slo_key in ((axes[0], "ttft_ms", "time to first token (ms)", "ttft_ms"),
                                       (axes[1], "tpot_ms", "time per output token (ms)", "tpot_ms")):
        for q, style in (("p50", "o-"), ("p90", "s--"), ("p99", "^:")):
            ax.plot(x, [p["summary"][metric][q] for p in pts], style, label=q)
        if slo.get(slo_key):
            ax.axhline(slo[slo_key], color="k", lw=1, ls="--", label=f"SLO {slo[slo_key]:g} ms")
        for p, xv in zip(pts, x):
            ax.annotate(f"{p['rate_per_s']:g}/s", (xv, p["summary"][metric]["p50"]), fontsize=7,
                        textcoords="offset points", xytext=(2, -9))
        ax.set_xlabel("output tokens/s (achieved)")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax = axes[2]
    levels = [k / 100 for k in range(101)]
    for p in pts:
        q = p["cdf"]["ttft_ms"]
        if q:
            ax.plot(q, levels, label=f"{p['rate_per_s']:g}/s")
    if slo.get("ttft_ms"):
        ax.axvline(slo["ttft_ms"], color="k", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("time to first token (ms)")
    ax.set_ylabel("fraction of requests")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, title="arrival rate", title_fontsize=7)
    wl = j.get("workload", {})
    fig.suptitle(f"{j.get('model', '')} on {j.get('system', '')}, scheduler {j.get('scheduler', '')}, "
                 f"{wl.get('arrival', '')} arrivals, input {wl.get('input', '')}, output {wl.get('output', '')}", fontsize=10)
    save(fig, out)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    try:
        j = json.load(open(sys.argv[1]))
    except (OSError, ValueError) as e:
        print(f"plot_serve.py: {sys.argv[1]}: cannot read JSON ({e})", file=sys.stderr)
        sys.exit(2)
    if not is_sweep(j):
        print(f"plot_serve.py: {sys.argv[1]}: not the JSON of `bitline serve sweep` (no points with a cdf)", file=sys.stderr)
        sys.exit(2)
    sweep(j, sys.argv[2])
    print(f"plot_serve.py: serve sweep -> {sys.argv[2]}")


if __name__ == "__main__":
    main()
