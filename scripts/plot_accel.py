#!/usr/bin/env python3
"""Charts of the FlashAccel results (matplotlib, Debian python3-matplotlib; style of plot_cosmos.py).

  plot_accel.py EVAL.json ABLATION.json SESSIONS.json OUTDIR

Writes, as PNG (byte-for-byte the same for the same inputs: no timestamp or version in the file):
  accel-throughput.png  per-GPU decode throughput of each model on each system vs the baseline (8 x H200),
                        one panel per SLO, the baseline's 1.0 drawn as a line, the paper's 8 x CSI mean (2.49x at
                        100 ms) beside bitline's; last, the paper's Llama-3.1-405B batches at 15K/6K and 50 ms (30 on
                        8 x H200, ~110 on 8 x CSI: scripts/paper_figures.json) beside bitline's (llama_batches)
  accel-ablation.png    the ablation variants' decode-step time, stacked by part of the step
  accel-hit-rate.png    multi-turn KV hit rate and recomputed share of prompt tokens vs the offered load
  accel-energy.png      tokens per joule vs the baseline: activity-based energy, and board power when the
                        evaluation reports it (a numeric point field naming tokens_per_j and board or tdp:
                        tokens_per_j_board, tokens_per_joule_at_tdp, ...)

The ablation, hit-rate and energy results have no published figure to draw. Legends lie over no bar, line or
label (below the panels but the ablation's). `make validate` regenerates docs/figures/ with it (Makefile: PLOT_PYTHON,
/usr/bin/python3 by default).
"""
import json
import math
import os
import re
import sys

from plotting import entries, legend_below, pyplot, save  # noqa: E402

plt = pyplot()

PAPER = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "paper_figures.json")))
# Readable names of the decode step's parts (StepReport breakdown_ms keys).
PART_LABELS = {"weights": "weight reads", "kv": "KV reads", "compute": "compute (exposed)", "communication": "communication",
               "overhead": "kernel overhead", "engine": "serving engine", "exposed_flash_latency": "exposed flash latency",
               "kv_write": "KV writes", "kv_erase": "erasing finished requests", "kv_arrange": "GroupArrange copy to HBM"}
# An activity-based and, when present, a board-power tokens-per-joule field of a point (accel eval).
ACTIVITY_TPJ = "tokens_per_j"
BOARD_TPJ = re.compile(r"^(?=.*tokens_per_j)(?=.*(board|tdp)).*$")  # tokens_per_j_board, tokens_per_joule_at_tdp, ...


def system_order(names):
    """h200x8, h200x16, csix4, ...: by kind as the eval lists them, then by GPU count."""
    def key(s):
        kind, _, n = s.rpartition("x")
        return ({"h200": 0, "csi": 1, "cli": 2}.get(kind, 3), kind, int(n) if n.isdecimal() else 0)
    return sorted(names, key=key)


def baseline_of(ev):
    for k in ev.get("summary", {}):
        if k.startswith("throughput_vs_"):
            return k[len("throughput_vs_"):]
    return "h200x8"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ratios(ev, field):
    """{(model, system, slo): geomean over contexts of point[field] / baseline's} where both are feasible."""
    base = baseline_of(ev)
    pts = [p for p in ev["points"] if p.get("feasible") and p.get(field) is not None]
    ref = {(p["model"], p["context"], p["slo_ms"]): p[field] for p in pts if p["system"] == base}
    acc = {}
    for p in pts:
        b = ref.get((p["model"], p["context"], p["slo_ms"]))
        if p["system"] == base or not b or p[field] <= 0:
            continue
        acc.setdefault((p["model"], p["system"], p["slo_ms"]), []).append(p[field] / b)
    return {k: geomean(v) for k, v in acc.items()}


def grouped(ax, groups, series, values, ylabel, title):
    """Bars: one group per entry of `groups`, one bar per entry of `series`; values[(group, series)] or None."""
    width = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ys = [values.get((groups[g], s)) for g in range(len(groups))]
        ax.bar(xs, [0 if y is None else y for y in ys], width, label=s, color=f"C{i}")  # n/a: a bar of height 0
        for x, y in zip(xs, ys):
            if y is None:
                ax.text(x, 0.02, "n/a", rotation=90, ha="center", va="bottom", fontsize=7, color="0.4")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def llama_batches(ev):
    """The paper's batch figures (FlashAccel: Llama-3.1-405B at 15K/6K, 50 ms SLO; scripts/paper_figures.json) beside
    bitline's, as docs/validation.md compares them: [(label, the paper's or None, bitline's or None)]. 8 x H200: the
    batch (its cap is memory); 8 x CSI: the bandwidth bound (the paper's "could in theory reach"), then the batch the
    whole step allows (no paper figure). [] when the eval has neither system at that point."""
    fa = PAPER["flashaccel"]
    at = fa["llama_agent_point"]
    pts = {p["system"]: p for p in ev["points"]
           if (p["model"], p["context"], p["slo_ms"]) == (at["model"], at["context"], at["slo_ms"])}
    feasible = lambda p, k: p.get(k) if p.get("feasible") else None  # noqa: E731
    rows = []
    if "h200x8" in pts:
        rows.append(("8xH200\nbatch", fa["llama_agent_h200x8_batch"], feasible(pts["h200x8"], "batch")))
    if "csix8" in pts:
        rows.append(("8xCSI\nbandwidth\nbound", fa["llama_agent_csix8_batch_at_50ms"],
                     feasible(pts["csix8"], "bandwidth_bound_batch")))
        rows.append(("8xCSI\nbatch", None, feasible(pts["csix8"], "batch")))
    return rows


def batch_panel(ax, rows, color):
    """llama_batches() as bars: the paper's (grey) beside bitline's (`color`: the model's in the other panels), each
    labelled with its value."""
    at = PAPER["flashaccel"]["llama_agent_point"]
    top = max([v for r in rows for v in r[1:] if v is not None] + [1])
    for offset, i, label, color in ((-0.2, 1, "paper (FlashAccel)", "#bbbbbb"), (0.2, 2, "bitline", color)):
        drawn = [(x + offset, r[i]) for x, r in enumerate(rows) if r[i] is not None]
        ax.bar([x for x, _ in drawn], [v for _, v in drawn], 0.4, label=label, color=color,
               edgecolor="k" if i == 1 else None)
        for x, v in drawn:
            ax.text(x, v + top * 0.02, f"{v:g}", ha="center", va="bottom", fontsize=8)
        for x, r in enumerate(rows):
            if r[i] is None:
                ax.text(x + offset, top * 0.02, "none published" if i == 1 else "n/a", rotation=90, ha="center",
                        va="bottom", fontsize=7, color="0.4")
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel("batch (requests decoding at once)")
    ax.set_title(f"{at['model']}, context {at['context']}, SLO {at['slo_ms']:g} ms", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)


def throughput(ev, path):
    base = baseline_of(ev)
    r = ratios(ev, "tokens_per_s_per_gpu")
    models = list(dict.fromkeys(p["model"] for p in ev["points"]))
    systems = [s for s in system_order({p["system"] for p in ev["points"]}) if s != base]
    slos = sorted({p["slo_ms"] for p in ev["points"]})
    batches = llama_batches(ev)
    fig, axes = plt.subplots(1, len(slos) + bool(batches), figsize=(6.5 * len(slos) + 3.2 * bool(batches), 4.2),
                             squeeze=False, gridspec_kw={"width_ratios": [6.5] * len(slos) + [3.2] * bool(batches)})
    if batches:
        model = PAPER["flashaccel"]["llama_agent_point"]["model"]
        batch_panel(axes[0][-1], batches, f"C{models.index(model)}")
    for ax, slo in zip(axes[0], slos):
        grouped(ax, systems, models, {(s, m): r.get((m, s, slo)) for s in systems for m in models},
                f"per-GPU decode tokens/s vs {base}", f"SLO {slo:g} ms (geomean over contexts; n/a: a system infeasible)")
        ax.axhline(1.0, color="k", ls="--", lw=1, label=f"{base} = 1.0")
        # The paper's one published throughput figure (FlashAccel, arXiv 2607.10186): 8 x CSI at the 100 ms SLO, the
        # mean over the models and contexts, beside bitline's mean of the same points.
        paper = PAPER["flashaccel"]["csix8_vs_h200x8_at_100ms"]
        mean = ev.get("summary", {}).get(f"throughput_vs_{base}", {}).get(f"csix8@{slo:g}", {}).get("mean")
        if slo == 100 and base == "h200x8" and "csix8" in systems:
            x = systems.index("csix8")
            ax.plot([x - 0.42, x + 0.42], [paper, paper], color="k", lw=2.5, label=f"paper: 8xCSI mean {paper:g}x (FlashAccel)")
            if mean:
                ax.plot([x - 0.42, x + 0.42], [mean, mean], color="k", lw=2.5, ls=":", label=f"bitline: 8xCSI mean {mean:.2f}x")
    for ax in axes[0][:len(slos)]:  # below the panel: inside, it covered the paper's line or a bar
        ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.09), frameon=False)
    save(fig, path)


# The ablation's variants in the order of the paper's figure (a JSON object's keys come back sorted); others after.
# Markers of the loads off the main sweep (hit-rate chart).
MARKERS = ["D", "s", "^", "v", "P", "X"]
ABLATION_ORDER = ["full", "no_prefetch", "no_weight_layout", "no_kv_layout", "plain_hbf", "hbm_only"]


def ablation(ab, path):
    variants = sorted(ab["variants"], key=lambda v: (ABLATION_ORDER.index(v) if v in ABLATION_ORDER else len(ABLATION_ORDER), v))
    parts = []
    for v in ab["variants"].values():
        for p in v["breakdown_ms"]:
            if p not in parts:
                parts.append(p)
    fig, ax = plt.subplots(figsize=(8, 4.4))
    bottom = [0.0] * len(variants)
    tallest = max(sum(ab["variants"][v]["breakdown_ms"].values()) for v in variants) or 1.0
    hidden = []
    for p in parts:
        ys = [ab["variants"][v]["breakdown_ms"].get(p, 0.0) for v in variants]
        visible = max(ys) >= 0.005 * tallest  # a part under half a percent of the tallest bar cannot be seen
        ax.bar(range(len(variants)), ys, 0.6, bottom=bottom, label=PART_LABELS.get(p, p) if visible else None)
        if not visible and max(ys) > 0:
            hidden.append(PART_LABELS.get(p, p))
        bottom = [b + y for b, y in zip(bottom, ys)]
    if hidden:
        ax.set_xlabel("parts too small to see: " + ", ".join(hidden), fontsize=7, color="0.35")
    for i, v in enumerate(variants):
        d = ab["variants"][v]
        note = f"{d['step_ms']:.0f} ms" + ("" if d.get("fits", True) else "\n(does not fit)")
        ax.text(i, bottom[i], note, ha="center", va="bottom", fontsize=8)
    ax.axhline(ab.get("slo_ms", 100), color="k", ls="--", lw=1, label=f"SLO {ab.get('slo_ms', 100):g} ms")
    ax.set_xticks(range(len(variants)), variants, rotation=15)
    ax.set_ylabel("decode step (ms), critical-path parts")
    ax.set_ylim(0, max(bottom) * 1.15)
    ax.set_title(f"Ablation: {ab['model']} on {ab['gpus']} GPUs, batch {ab['batch_per_rank']} per rank, "
                 f"context {ab['context']['name']}", fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    save(fig, path)


def hit_rate(se, path):
    loads = se.get("loads", [])
    systems = system_order(se["systems"].keys())
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    if not loads:  # one trace: one bar per system
        for ax, key, label in ((axes[0], "hit_rate", "KV hit rate"), (axes[1], "recomputed_fraction", "recomputed / prompt tokens")):
            ax.bar(systems, [se["systems"][s][key] for s in systems])
            ax.set_ylabel(label)
            ax.set_ylim(0, 1.05)
            ax.grid(axis="y", alpha=0.3)
        save(fig, path)
        return
    # The sweep of one parameter (the loads sharing the most common think time and turns) as lines; the others
    # as labelled markers at their own load.
    shape = lambda l: (l["offered"]["think_time_s"], l["offered"]["turns_min"], l["offered"]["turns_max"],
                       l["offered"].get("think_time_distribution", "exponential"))
    # x: the requests decoding at once (sessions.decoding, Little's law) where the loads give it, else the sessions alive
    by_decoding = all(l["offered"].get("decoding", 0) > 0 for l in loads)
    x = (lambda l: l["offered"]["decoding"]) if by_decoding else (lambda l: l["trace"]["sessions_alive"])
    shapes = [shape(l) for l in loads]
    main = max(dict.fromkeys(shapes), key=shapes.count)  # on a tie the first load's shape (a set's order varies by run)
    line = sorted((l for l in loads if shape(l) == main), key=x)
    others = [l for l in loads if shape(l) != main]
    for ax, key, label in ((axes[0], "hit_rate", "KV hit rate (reused / reusable tokens)"),
                           (axes[1], "recomputed_fraction", "recomputed / prompt tokens")):
        for i, s in enumerate(systems):
            color = f"C{i}"
            ax.plot([x(l) for l in line], [l["systems"][s][key] for l in line], "o-", color=color,
                    label=s, ms=4)
            for j, l in enumerate(others):
                ax.plot(x(l), l["systems"][s][key], MARKERS[j % len(MARKERS)], color=color, ms=7,
                        mfc="none")
        for j, l in enumerate(others):  # legend entries for the other loads' markers (one colour per system)
            o = l["offered"]
            ax.plot([], [], MARKERS[j % len(MARKERS)], color="0.3", mfc="none",
                    label=f"{l['name']}: think {o['think_time_s']:g} s "
                          f"({o.get('think_time_distribution', 'exponential')}), {o['turns_min']}-{o['turns_max']} turns")
        ax.set_xscale("log")
        ax.set_xlabel("offered load: requests decoding at once (Little's law)" if by_decoding
                      else "offered load: sessions waiting for a next turn (arrival rate x session time)")
        ax.set_ylabel(label)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    t0, t1, n0, dist = main
    axes[0].set_title(f"lines: the load swept (think time {t0:g} s {dist}, {t1}-{n0} turns per session);\n"
                      "open markers: one load with another think time or turn count", fontsize=9)
    axes[1].set_title("the rest of each prompt (new input, first turns) is never reusable", fontsize=9)
    # Under the panels (inside one, it covered a line or a marker): the systems, then the other loads' markers.
    drawn = entries(axes[0])
    save(fig, path, rect=legend_below(fig, [drawn[:len(systems)], drawn[len(systems):]]))


def energy(ev, path):
    base = baseline_of(ev)
    fields = [(ACTIVITY_TPJ, "activity-based energy")]
    board = sorted({k for p in ev["points"] for k, v in p.items() if BOARD_TPJ.match(k) and isinstance(v, (int, float))})
    if board:
        fields.append((board[0], f"at board power ({board[0]})"))
    systems = [s for s in system_order({p["system"] for p in ev["points"]}) if s != base]
    slos = sorted({p["slo_ms"] for p in ev["points"]})
    fig, axes = plt.subplots(1, len(fields), figsize=(6.5 * len(fields), 4.2), squeeze=False)
    for ax, (field, title) in zip(axes[0], fields):
        r = ratios(ev, field)
        vals = {}
        for s in systems:
            for slo in slos:
                xs = [v for (m, ss, sl), v in r.items() if ss == s and sl == slo]
                vals[(s, f"SLO {slo:g} ms")] = geomean(xs)
        grouped(ax, systems, [f"SLO {slo:g} ms" for slo in slos], vals, f"tokens per joule vs {base}",
                f"{title} (geomean over models and contexts)")
        ax.axhline(1.0, color="k", ls="--", lw=1, label=f"{base} = 1.0")
        # Below the panel: in its lower right, it covered the last system's bars.
        ax.legend(fontsize=8, ncol=len(slos) + 1, loc="upper center", bbox_to_anchor=(0.5, -0.09), frameon=False)
    save(fig, path)


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    ev, ab, se = (json.load(open(p)) for p in sys.argv[1:4])
    outdir = sys.argv[4]
    os.makedirs(outdir, exist_ok=True)
    throughput(ev, os.path.join(outdir, "accel-throughput.png"))
    ablation(ab, os.path.join(outdir, "accel-ablation.png"))
    hit_rate(se, os.path.join(outdir, "accel-hit-rate.png"))
    energy(ev, os.path.join(outdir, "accel-energy.png"))
    print(f"wrote {outdir}/accel-throughput.png, accel-ablation.png, accel-hit-rate.png, accel-energy.png")


if __name__ == "__main__":
    main()
