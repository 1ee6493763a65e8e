#!/usr/bin/env python3
"""Charts of request-level serving results (matplotlib, Debian python3-matplotlib).

  plot_serve.py SWEEP.json OUT.png

SWEEP.json is the output of `bitline serve sweep ... --rates R1,R2,... --json SWEEP.json` (docs/serving.md). One
figure, three panels: the throughput-latency curve (p50/p90/p99 time to first token against the output tokens/s
achieved at each rate), the same for the time per output token, and the CDF of the time to first token at every
rate (from the sweep's 101 quantiles per rate). The SLOs given to the sweep are drawn as dashed lines. Same input,
same bytes. `plot.py SWEEP.json` draws the same.

`plot.py` also draws, with the functions here (their inputs checked there first):
  run(j, out)                  `serve run` (colocated or --disaggregate): the latency percentiles, the throughput
                               and goodput, each instance's busy share; real GPUs' measured batch-1 latency beside
                               bitline's where the run is one (scripts/paper_figures.json, see measured())
  capacity(j, out)             `serve capacity`: every probed rate's p90 TTFT, p99 TPOT and output tokens/s, the SLOs
                               and the capacity found
  capacity_experiment(j, out)  `make serve-capacity`'s results/serve-capacity*.json (scripts/serve_capacity.py):
                               the capacity of every model on every system
"""
import json
import math
import os
import sys

from plotting import plain_log, pyplot, save  # noqa: E402

plt = pyplot()
from matplotlib.lines import Line2D  # noqa: E402

PAPER = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "paper_figures.json")))
# Latency metrics of a run's summary, as drawn (the first three are always there; the others where written).
METRICS = (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"), ("itl_ms", "ITL"), ("e2e_ms", "E2E"), ("queueing_ms", "queueing"))
PERCENTILES = ("p50", "p90", "p95", "p99")
# Measured metrics of real_gpus rows -> the summary's metric they are the same quantity as, at batch 1.
MEASURED_METRIC = {"ttft_ms": "ttft_ms", "latency_ms": "e2e_ms"}
MEASURED_SECTIONS = ("real_gpus", "real_gpus_other")


def log_if_wide(ax, values, axis="y"):
    """A log scale (plain numbers) where the positive values span more than 20x (a zero, say a run's p50 queueing, is
    then drawn at the axis' foot) and none is negative; True where it set one."""
    pos = [v for v in values if v > 0]
    if pos and min(values) >= 0 and max(pos) > 20 * min(pos):
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        plain_log(ax, axis)
        return True
    return False


def measured(j):
    """[(summary metric, value ms, label)]: real GPUs' batch-1 latency (scripts/paper_figures.json, the rows `make
    validate` checks bitline's static batch against) where this run is the same request alone: a closed loop of one
    user, the row's model, GPU kind and count, precision, and fixed prompt and output lengths. None otherwise."""
    wl, cfg = j.get("workload") or {}, j.get("config") or {}
    precision = ((cfg.get("llm") or {}).get("precision") if isinstance(cfg, dict) else None)
    if wl.get("kind") != "closed_loop" or wl.get("concurrency") != 1 or "disaggregation" in j:
        return []
    out = []
    for section in MEASURED_SECTIONS:
        sources = PAPER[section].get("sources", {})
        for r in PAPER[section]["rows"]:
            metric = MEASURED_METRIC.get(r["metric"])
            if (metric and r["batch"] == 1 and j.get("model") == r["model"] and j.get("system") == f"{r['kind']}x{r['gpus']}"
                    and precision == r["precision"] and str(wl.get("input")) == str(r["input"])
                    and str(wl.get("output")) == str(r["output"])):
                src = r.get("source", "trt09")
                name = {"trt09": "TensorRT-LLM 0.9", "trt05": "TensorRT-LLM 0.5", "nemo": "NeMo"}.get(src, src)
                if src not in sources and section == "real_gpus_other":
                    name = "TensorRT-LLM 0.9"
                out.append((metric, float(r["measured"]), f"measured, {name} (batch 1)"))
    return out


def where_of(j):
    """`MODEL on SYSTEM`, or for --disaggregate the prefill and decode instances."""
    dis = j.get("disaggregation")
    if isinstance(dis, dict):
        pre, dec = dis.get("prefill") or {}, dis.get("decode") or {}
        return (f"{j.get('model', '')}, disaggregated: {pre.get('instances', '?')} prefill x {pre.get('system', '?')}, "
                f"{dec.get('instances', '?')} decode x {dec.get('system', '?')}")
    return f"{j.get('model', '')} on {j.get('system', '')}"


def title_of(j):
    wl = j.get("workload") or {}
    if wl.get("kind") == "closed_loop":
        n = wl.get("concurrency", "?")
        load = f"{n} user{'' if n == 1 else 's'} (closed loop)"
    elif "rate_per_s" in wl:
        load = f"{wl.get('arrival', '')} arrivals at {wl['rate_per_s']:g}/s"
    else:
        load = f"{wl.get('arrival', '')} arrivals"
    return f"{where_of(j)}, scheduler {j.get('scheduler', '')}: {load}, input {wl.get('input', '')}, output {wl.get('output', '')}"


def run(j, out):
    s = j["summary"]
    metrics = [(k, label) for k, label in METRICS if isinstance(s.get(k), dict)]
    instances = s.get("instances") or []
    fig = plt.figure(figsize=(14, 4.9))
    grid = fig.add_gridspec(1, 4, width_ratios=(3.2, 1, 1, 1.3 if len(instances) > 1 else 1))
    ax = fig.add_subplot(grid[0])
    width = 0.8 / len(PERCENTILES)
    slo = s.get("slo") or {}
    found = measured(j)
    values = [s[k][q] for k, _ in metrics for q in PERCENTILES + ("mean",) if q in s[k]]
    values += [slo[k] for k, _ in metrics if slo.get(k)] + [v for _, v, _ in found]
    if log_if_wide(ax, values):
        foot = min(v for v in values if v > 0) / 2
        ax.set_ylim(foot, max(values) * 4)  # room above the tallest bar for its label
    else:
        foot = 0.0
        ax.set_ylim(0, max(values + [1e-9]) * 1.3)
    handles = []
    for i, q in enumerate(PERCENTILES):
        xs = [g + (i - (len(PERCENTILES) - 1) / 2) * width for g in range(len(metrics))]
        ys = [s[k].get(q, 0.0) for k, _ in metrics]
        handles.append(ax.bar(xs, ys, width, label=q, color=f"C{i}"))
        for x, y in zip(xs, ys):
            ax.text(x, max(y, foot), f" {y:.3g}", rotation=90, ha="center", va="bottom", fontsize=6.5)
    for g, (k, _) in enumerate(metrics):
        if "mean" in s[k]:
            ax.plot([g - 0.4, g + 0.4], [max(s[k]["mean"], foot)] * 2, color="k", lw=1.5)
    handles.append(Line2D([], [], color="k", lw=1.5, label="mean"))
    if any(slo.get(k) for k, _ in metrics):
        for g, (k, _) in enumerate(metrics):
            if slo.get(k):
                ax.plot([g - 0.45, g + 0.45], [slo[k]] * 2, color="crimson", ls="--", lw=1.5)
        handles.append(Line2D([], [], color="crimson", ls="--", lw=1.5, label="SLO"))
    marks = ("D", "*", "P", "X")
    for n, (k, v, label) in enumerate(found):
        g = [m for m, _ in metrics].index(k)
        handles.append(ax.plot([g + 0.45], [v], marks[n % len(marks)], color="k", ms=7, label=f"{label}: {v:g} ms")[0])
    ax.set_xticks(range(len(metrics)), [label for _, label in metrics])
    ax.set_xlim(-0.6, len(metrics) - 0.4)
    ax.set_ylabel("ms")
    title = "latency per request: percentiles (bars), mean (black)"
    ax.set_title(title + ("\nmeasured on real GPUs (black markers, scripts/paper_figures.json)" if found else ""), fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    # Below the panels, as one row: covers no bar whatever the values.
    fig.legend(handles=handles, fontsize=7.5, loc="lower left", bbox_to_anchor=(0.01, 0.0), ncol=len(handles),
               frameon=False)

    ax = fig.add_subplot(grid[1])
    ys = [s["input_tokens_per_s"], s["output_tokens_per_s"]]
    ax.bar([0, 1], ys, 0.6, color=["C7", "C0"])
    for x, y in enumerate(ys):
        ax.text(x, y, f"{y:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks([0, 1], ["input", "output"])
    ax.set_ylim(0, max(ys + [1e-9]) * 1.15)
    ax.set_ylabel("tokens/s")
    ax.set_title("token throughput", fontsize=9)
    ax.grid(axis="y", alpha=0.3)

    ax = fig.add_subplot(grid[2])
    good = s.get("goodput_requests_per_s")
    ys = [s["requests_per_s"]] + ([good] if good is not None else [])
    ax.bar(range(len(ys)), ys, 0.6, color=["C0", "C2"][:len(ys)])
    for x, y in enumerate(ys):
        ax.text(x, y, f"{y:.3g}", ha="center", va="bottom", fontsize=8)
    att = s.get("slo_attainment")
    ax.set_xticks(range(len(ys)), ["completed", "goodput" + (f"\n({att:.1%} in SLO)" if att is not None else "")][:len(ys)],
                  fontsize=8)
    ax.set_ylim(0, max(ys + [1e-9]) * 1.15)
    ax.set_ylabel("requests/s")
    ax.set_title("request throughput", fontsize=9)
    ax.grid(axis="y", alpha=0.3)

    ax = fig.add_subplot(grid[3])
    dur = s.get("duration_s") or 0.0
    if instances:
        busy = [min(1.0, i["busy_s"] / dur) if dur > 0 else 0.0 for i in instances]
        colors = {"prefill": "C1", "decode": "C0", "colocated": "C0"}
        if len(instances) <= 8:  # a bar per instance
            bars = [(f"{i['role']}\n{i['gpus']} GPU" + ("s" if i["gpus"] != 1 else ""), i["role"], b, b, b)
                    for i, b in zip(instances, busy)]
        else:  # a bar per role: the mean, the least and most busy instance as a whisker
            roles = list(dict.fromkeys(i["role"] for i in instances))
            bars = []
            for r in roles:
                bs = [b for i, b in zip(instances, busy) if i["role"] == r]
                bars.append((f"{r}\n{len(bs)} instances", r, sum(bs) / len(bs), min(bs), max(bs)))
        xs = range(len(bars))
        ax.bar(xs, [100 * b[2] for b in bars], 0.6, color=[colors.get(b[1], "C4") for b in bars])
        for x, (_, _, mean, lo, hi) in zip(xs, bars):
            if hi > lo:
                ax.errorbar([x], [100 * mean], yerr=[[100 * (mean - lo)], [100 * (hi - mean)]], color="k", capsize=3)
            ax.text(x, 100 * hi, f"{mean:.0%}", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(xs, [b[0] for b in bars], fontsize=7)
        ax.set_ylim(0, 115)
        ax.set_ylabel("busy (% of the run)")
        ax.set_title("each instance's engine" if len(instances) <= 8 else "instances' engines (mean, min-max)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    else:
        ax.axis("off")
    notes = [f"{s.get('requests', '?')} requests in {dur:.3g} s"]
    if "preemptions" in s:
        notes.append(f"{s['preemptions']} preemptions")
    kv = s.get("kv_transfer")
    if isinstance(kv, dict) and kv.get("transfers"):
        notes.append(f"{kv['transfers']} KV transfers, mean {kv.get('mean_ms', 0):.3g} ms")
    fig.suptitle(title_of(j) + "\n" + ", ".join(notes), fontsize=10)
    save(fig, out, rect=(0, 0.05, 1, 1))


def capacity(j, out):
    probes = sorted(j["probes"], key=lambda p: p["rate_per_s"])
    slo = j.get("slo") or {}
    cap, miss = j["capacity_requests_per_s"], j.get("first_miss_requests_per_s")
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.4))
    rates = [p["rate_per_s"] for p in probes]
    for ax, key, label, slo_key in ((axes[0], "p90_ttft_ms", "p90 time to first token (ms)", "p90_ttft_ms"),
                                    (axes[1], "p99_tpot_ms", "p99 time per output token (ms)", "p99_tpot_ms"),
                                    (axes[2], "output_tokens_per_s", "output tokens/s", None)):
        ys = [p[key] for p in probes]
        ax.plot(rates, ys, "-", color="0.6", lw=1, zorder=1)
        ok = [(r, y) for r, y, p in zip(rates, ys, probes) if p["meets"]]
        bad = [(r, y) for r, y, p in zip(rates, ys, probes) if not p["meets"]]
        ax.plot([r for r, _ in ok], [y for _, y in ok], "o", color="C2", label="meets both SLOs", zorder=2)
        ax.plot([r for r, _ in bad], [y for _, y in bad], "x", color="C3", mew=2, label="misses an SLO", zorder=2)
        if slo_key and slo.get(slo_key):
            ax.axhline(slo[slo_key], color="k", ls="--", lw=1, label="SLO")
        ax.axvline(cap, color="C2", ls=":", lw=1.5, label=f"capacity {cap:.3g}/s")
        log_if_wide(ax, rates, "x")
        log_if_wide(ax, ys + ([slo[slo_key]] if slo_key and slo.get(slo_key) else []))
        ax.set_xlabel("arrival rate (requests/s)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    wl = j.get("workload") or {}
    beyond = f" (the next probe, {miss:.4g}/s, misses)" if miss else ""
    fig.suptitle(f"{where_of(j)}: capacity {cap:.4g} requests/s{beyond}, "
                 f"p90 TTFT <= {slo.get('p90_ttft_ms', 0):g} ms and p99 TPOT <= {slo.get('p99_tpot_ms', 0):g} ms\n"
                 f"{wl.get('requests', '?')} requests per probe, input {wl.get('input', '')}, output {wl.get('output', '')}, "
                 f"scheduler {j.get('scheduler', '')}", fontsize=10)
    save(fig, out, rect=(0, 0.07, 1, 1))


def capacity_experiment(j, out):
    points = j["points"]
    models = list(dict.fromkeys(p["model"] for p in points))
    systems = list(dict.fromkeys(p["system"] for p in points))
    at = {(p["model"], p["system"]): p for p in points}
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(models) * max(1, len(systems)) ** 0.5 + 3), 4.6))
    width = 0.8 / len(systems)
    top = max([p["capacity_requests_per_s"] for p in points] + [1e-9])
    for i, s in enumerate(systems):
        xs = [m + (i - (len(systems) - 1) / 2) * width for m in range(len(models))]
        ys = [at[(m, s)]["capacity_requests_per_s"] if (m, s) in at else 0.0 for m in models]
        ax.bar(xs, ys, width, label=s, color=f"C{i % 10}")
        for x, y, m in zip(xs, ys, models):
            p = at.get((m, s))
            note = "not run" if p is None else ("not served" if "infeasible" in p or y <= 0 else f"{y:.3g}")
            ax.text(x, y + 0.01 * top, note, ha="center", va="bottom", fontsize=7, rotation=90 if len(systems) > 3 else 0)
    ax.set_xticks(range(len(models)), models, rotation=20 if len(models) > 4 else 0, ha="right" if len(models) > 4 else "center")
    ax.set_ylim(0, top * 1.25)
    ax.set_ylabel("capacity (requests/s meeting both SLOs)")
    e = j.get("experiment") or {}
    how = (f"decode side, {e['disaggregate']} with {e.get('prefill_system', '?')} prefill" if "disaggregate" in e
           else "prefill and decode on the same GPUs")
    ax.set_title(f"{e.get('experiment', 'serve capacity')}: input {e.get('input', '?')}, output {e.get('output', '?')}, "
                 f"p90 TTFT <= {e.get('slo_p90_ttft_ms', 2000):g} ms, p99 TPOT <= {e.get('slo_p99_tpot_ms', 100):g} ms\n"
                 f"{how} (bitline serve capacity)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), title="system", title_fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    save(fig, out)



def is_sweep(j):
    return isinstance(j, dict) and "points" in j and j["points"] and isinstance(j["points"][0], dict) \
        and "cdf" in j["points"][0] and "summary" in j["points"][0]


def thinned(xs, ys, items):
    """(x, y, item) of the points whose rate label does not overlap an earlier one's: on the panel (x linear, y log)
    at least 4% of the x range or 6% of the decades apart. At saturation the rates pile up at one throughput."""
    pos = [y for y in ys if y > 0]
    if not pos:
        yield from zip(xs, ys, items)
        return
    xspan = (max(xs) - min(xs)) or 1.0
    lspan = math.log10(max(pos) / min(pos)) or 1.0
    kept = []
    for x, y, it in zip(xs, ys, items):
        ly = math.log10(max(y, min(pos)))
        if all(abs(x - kx) / xspan >= 0.04 or abs(ly - ky) / lspan >= 0.06 for kx, ky, _ in kept):
            kept.append((x, ly, it))
            yield x, y, it


def load_label(p):
    """A sweep point's load: its open-loop rate, or its closed loop's users."""
    return f"{p['rate_per_s']:g}/s" if "rate_per_s" in p else f"{p['concurrency']:g} users"


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
        ys = [p["summary"][metric]["p50"] for p in pts]
        for xv, yv, p in thinned(x, ys, pts):
            ax.annotate(load_label(p), (xv, yv), fontsize=7, textcoords="offset points", xytext=(2, -9))
        ax.set_xlabel("output tokens/s (achieved)")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        plain_log(ax, "y")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    ax = axes[2]
    levels = [k / 100 for k in range(101)]
    step = math.ceil(len(pts) / 24)  # past 24 rates every n-th is in the legend (a column of 24 at most)
    for i, p in enumerate(pts):
        q = p["cdf"]["ttft_ms"]
        if q:
            ax.plot(q, levels, label=load_label(p) if i % step == 0 else None)
    if slo.get("ttft_ms"):
        ax.axvline(slo["ttft_ms"], color="k", lw=1, ls="--")
    ax.set_xscale("log")
    plain_log(ax, "x")
    ax.set_xlabel("time to first token (ms)")
    ax.set_ylabel("fraction of requests")
    ax.grid(alpha=0.3)
    # Beside the panel, never over a curve or the SLO's line (in the lower right it covered the SLO at the axis' end).
    closed = "concurrency" in pts[0]
    what = "closed loop" if closed else "arrival rate"
    ax.legend(fontsize=7 if len(pts) <= 8 else 6, title=what, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    wl = j.get("workload", {})
    load = "closed loops" if closed else f"{wl.get('arrival', '')} arrivals"
    fig.suptitle(f"{where_of(j)}, scheduler {j.get('scheduler', '')}, "
                 f"{load}, input {wl.get('input', '')}, output {wl.get('output', '')}", fontsize=10)
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
