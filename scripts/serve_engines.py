#!/usr/bin/env python3
"""bitline's serving engines against a published benchmark run (`make validate`; docs/serving.md, "Engines against
published benchmark runs").

  serve_engines.py BITLINE DOC_MD OUT_JSON OUT_PNG

Runs `BITLINE serve run` once per setting and engine of SGLang's published comparison of SGLang v0.3.0 with vLLM
v0.6.0 (PUBLISHED below), writes OUT_JSON ({"source", "targets", "summary", "rows": [{setting, engine, metric,
published, bitline, deviation}]}, deviation = bitline / published - 1), the table and its summary between the
`GENERATED serve-engines` markers of DOC_MD, and the chart OUT_PNG (matplotlib, Debian python3-matplotlib). Progress
on stderr, the summary on stdout. Exit 2 when a run fails or DOC_MD has no markers. Deterministic: the same bitline
gives byte-identical OUT_JSON, DOC_MD block and OUT_PNG.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
LENGTHS = "configs/lengths/sharegpt-shaped.csv"  # scripts/make_sharegpt_lengths.py

# The published runs: sgl-project/sglang, benchmark/benchmark_vllm_060/README.md ("Online benchmark results" and
# "Offline benchmark results"): Llama-3.1 Instruct in BF16, ShareGPT prompts with benchmark_serving's filters, Poisson
# arrivals; vLLM v0.6.0 with --num-scheduler-steps 10, SGLang v0.3.0 with --disable-radix-cache. Medians in ms
# (E2E, TTFT, TPOT, ITL); offline: 5,000 prompts sent at once, output tokens/s.
SOURCE = ("sgl-project/sglang benchmark/benchmark_vllm_060/README.md: SGLang v0.3.0 (radix cache off) against "
          "vLLM v0.6.0 (--num-scheduler-steps 10), Llama-3.1 Instruct BF16, ShareGPT, Poisson arrivals")
ONLINE_METRICS = ("e2e", "ttft", "tpot", "itl")
PUBLISHED = [
    # (setting, model, system, tp, load, {engine: values})
    ("Llama-3.1-8B, 1 x A100-80G, 4 req/s", "llama3.1-8b", "a100x1", None, ("rate", 4, 1200),
     {"sglang": (1564.17, 31.98, 13.17, 11.93), "vllm": (1691.97, 100.48, 14.14, 129.32)}),
    ("Llama-3.1-8B, 1 x A100-80G, 8 req/s", "llama3.1-8b", "a100x1", None, ("rate", 8, 2400),
     {"sglang": (2175.02, 35.68, 17.85, 14.41), "vllm": (2137.16, 120.39, 17.09, 158.63)}),
    ("Llama-3.1-70B, 4 x H100, 4 req/s", "llama3.1-70b", "h100x4", 4, ("rate", 4, 1200),
     {"sglang": (3005.24, 53.94, 25.03, 21.67), "vllm": (2915.60, 179.15, 23.58, 231.23)}),
    ("Llama-3.1-70B, 4 x H100, 8 req/s", "llama3.1-70b", "h100x4", 4, ("rate", 8, 2400),
     {"sglang": (4064.98, 58.11, 33.07, 24.45), "vllm": (3752.38, 207.12, 29.15, 275.32)}),
    ("Llama-3.1-8B, 1 x A100-80G, offline", "llama3.1-8b", "a100x1", None, ("concurrency", 5000, 5000),
     {"sglang": (4281.51,), "vllm": (4132.37,)}),
    ("Llama-3.1-70B, 4 x H100, offline", "llama3.1-70b", "h100x4", 4, ("concurrency", 5000, 5000),
     {"sglang": (3856.01,), "vllm": (3700.64,)}),
]
# What the published commands set beyond the engines' defaults, per (setting, engine): SGLang's offline 70B server
# ran `--mem-frac 0.88` (the README's "Notes": SGLang's default at TP 4 is 0.85; vLLM's 0.9 at both).
RUN_OPTIONS = {("Llama-3.1-70B, 4 x H100, offline", "sglang"): ["--set", "engine.mem_fraction_static=0.88"]}
ENGINES = {
    "sglang": ("SGLang", ["--engine", "sglang", "--set", "engine.disable_radix_cache=true",
                          "--set", "engine.disable_overlap_schedule=true"]),
    # vLLM's servers ran `--max_model_len 4096`: without chunked prefill, v0.6.0's max_num_batched_tokens is
    # max(max_model_len, 2048) (vllm/config.py, SchedulerConfig)
    "vllm": ("vLLM", ["--engine", "vllm-v0", "--set", "engine.num_scheduler_steps=10",
                      "--set", "engine.max_num_batched_tokens=4096"]),
}
METRICS = {"e2e": "E2E p50 (ms)", "ttft": "TTFT p50 (ms)", "tpot": "TPOT p50 (ms)", "itl": "ITL p50 (ms)",
           "throughput": "output tokens/s"}
# The targets: median |deviation| <= 10% over E2E, TPOT, ITL and throughput, <= 20% over TTFT, none > 35%.
TARGET_MAIN, TARGET_TTFT, TARGET_MAX = 0.10, 0.20, 0.35


def fail(msg):
    print(f"serve_engines.py: {msg}", file=sys.stderr)
    sys.exit(2)


def command(bitline, setting, model, system, tp, load, engine, out):
    kind, x, n = load
    cmd = [bitline, "serve", "run", "--model", model, "--system", system]
    if tp:
        cmd += ["--tp", str(tp)]
    cmd += ["--rate", str(x)] if kind == "rate" else ["--concurrency", str(x)]
    cmd += ["--requests", str(n), "--lengths", LENGTHS, "--seed", "1", "--json", out] + ENGINES[engine][1]
    return cmd + RUN_OPTIONS.get((setting, engine), [])


def run(cmd, out):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        fail(f"a run failed (exit {p.returncode}): {' '.join(cmd)}\n{(p.stdout + p.stderr)[-3000:]}")
    try:
        s = json.load(open(out))["summary"]
        return {"e2e": s["e2e_ms"]["p50"], "ttft": s["ttft_ms"]["p50"], "tpot": s["tpot_ms"]["p50"],
                "itl": s["itl_ms"]["p50"], "throughput": s["output_tokens_per_s"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"a run wrote no usable summary ({e!r}): {' '.join(cmd)}")


def collect(bitline):
    rows = []
    n, i = sum(len(p[5]) for p in PUBLISHED), 0
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "run.json")
        for setting, model, system, tp, load, published in PUBLISHED:
            for engine, values in published.items():
                i += 1
                print(f"[{i}/{n}] {setting}, {ENGINES[engine][0]}", file=sys.stderr, flush=True)
                if os.path.exists(out):
                    os.remove(out)
                got = run(command(bitline, setting, model, system, tp, load, engine, out), out)
                metrics = ONLINE_METRICS if load[0] == "rate" else ("throughput",)
                for metric, pub in zip(metrics, values):
                    rows.append({"setting": setting, "engine": ENGINES[engine][0], "metric": metric, "published": pub,
                                 "bitline": round(got[metric], 4), "deviation": round(got[metric] / pub - 1.0, 6)})
    return rows


def summarise(rows):
    main = [abs(r["deviation"]) for r in rows if r["metric"] != "ttft"]
    ttft = [abs(r["deviation"]) for r in rows if r["metric"] == "ttft"]
    worst = max(rows, key=lambda r: (abs(r["deviation"]), r["setting"], r["engine"], r["metric"]))
    beyond = [r for r in rows if abs(r["deviation"]) > TARGET_MAX]
    return {"median_abs_deviation_e2e_tpot_itl_throughput": round(statistics.median(main), 6),
            "rows_e2e_tpot_itl_throughput": len(main),
            "median_abs_deviation_ttft": round(statistics.median(ttft), 6), "rows_ttft": len(ttft),
            "max_abs_deviation": round(abs(worst["deviation"]), 6),
            "max_abs_deviation_row": {k: worst[k] for k in ("setting", "engine", "metric")},
            "rows_beyond_max_target": len(beyond),
            "meets_median_target": statistics.median(main) <= TARGET_MAIN,
            "meets_ttft_target": statistics.median(ttft) <= TARGET_TTFT,
            "meets_max_target": not beyond}


def short(r):
    """'8B 4 req/s', '70B offline'."""
    size = "8B" if "8B" in r["setting"] else "70B"
    return f"{size} {r['setting'].rsplit(', ', 1)[1]}"


def fmt(x):
    return f"{x:,.2f}"


def pct(x):
    return f"{x:+.1%}"


def verdict(ok):
    return "met" if ok else "**missed**"


def table(rows, s):
    out = ["| setting | engine | metric | published | bitline | deviation |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['setting']} | {r['engine']} | {METRICS[r['metric']]} | {fmt(r['published'])} | "
                   f"{fmt(r['bitline'])} | {pct(r['deviation'])} |")
    w = s["max_abs_deviation_row"]
    worst = next(r for r in rows if all(r[k] == w[k] for k in w))
    beyond = [r for r in rows if abs(r["deviation"]) > TARGET_MAX]
    out += ["",
            f"- Median \\|deviation\\| over E2E, TPOT, ITL and throughput ({s['rows_e2e_tpot_itl_throughput']} rows): "
            f"{s['median_abs_deviation_e2e_tpot_itl_throughput']:.1%}; target <= {TARGET_MAIN:.0%}: "
            f"{verdict(s['meets_median_target'])}.",
            f"- Median \\|deviation\\| over TTFT ({s['rows_ttft']} rows): {s['median_abs_deviation_ttft']:.1%}; "
            f"target <= {TARGET_TTFT:.0%}: {verdict(s['meets_ttft_target'])}.",
            f"- Largest \\|deviation\\|: {pct(worst['deviation'])} ({METRICS[worst['metric']]}, {worst['engine']}, "
            f"{worst['setting']}); target: none beyond {TARGET_MAX:.0%}: {verdict(s['meets_max_target'])}"
            + (f" ({len(beyond)} of {len(rows)} rows beyond it: "
               + "; ".join(f"{r['metric'].upper() if r['metric'] != 'throughput' else 'throughput'} {r['engine']} "
                           f"{short(r)} {pct(r['deviation'])}" for r in beyond) + ")."
               if beyond else ".")]
    return out


def replace_generated(path, name, lines):
    """The same GENERATED markers as scripts/validation.py."""
    begin, end = f"<!-- GENERATED {name}: make validate -->", f"<!-- END GENERATED {name} -->"
    text = open(path).read()
    if begin not in text or end not in text:
        fail(f"{path}: markers for {name} missing ({begin} ... {end})")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(path, "w").write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


def figure(rows, path):
    sys.path.insert(0, HERE)
    import plotting
    plt = plotting.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.2))
    for ax, metric in zip([a for line in axes for a in line], ("e2e", "ttft", "tpot", "itl", "throughput")):
        rs = [r for r in rows if r["metric"] == metric]
        xs = range(len(rs))
        w = 0.38
        ax.bar([x - w / 2 for x in xs], [r["published"] for r in rs], w, color="0.65", label="published")
        bars = ax.bar([x + w / 2 for x in xs], [r["bitline"] for r in rs], w,
                      color=["tab:orange" if r["engine"] == "SGLang" else "tab:blue" for r in rs], label="bitline")
        top = max(max(r["published"], r["bitline"]) for r in rs)
        for b, r in zip(bars, rs):
            ax.annotate(f"{r['deviation']:+.0%}", (b.get_x() + b.get_width() / 2, max(r["published"], r["bitline"])),
                        xytext=(-3, 2), textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, top * 1.15)
        ax.set_xticks(list(xs), [f"{short(r).replace(' req/s', '/s')}\n{r['engine']}" for r in rs], fontsize=7)
        ax.set_title(METRICS[metric] + (", 5,000 prompts at once" if metric == "throughput" else ""), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    ax = axes[1][2]
    ax.axis("off")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color="0.65", label="published (SGLang's benchmark_vllm_060)"),
                       Patch(color="tab:orange", label="bitline, --engine sglang"),
                       Patch(color="tab:blue", label="bitline, --engine vllm-v0")],
              loc="center", fontsize=9, title="left bar published, right bar bitline;\nlabels: bitline / published - 1",
              title_fontsize=8)
    fig.suptitle("Serving engines against SGLang v0.3.0 / vLLM v0.6.0 published runs (Llama-3.1, ShareGPT-shaped "
                 "lengths)", fontsize=10)
    plotting.save(fig, path)


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    bitline, doc, out_json, out_png = sys.argv[1:5]
    bitline = os.path.abspath(bitline)
    rows = collect(bitline)
    s = summarise(rows)
    for p in (out_json, out_png):
        if os.path.dirname(p):
            os.makedirs(os.path.dirname(p), exist_ok=True)
    doc_data = {"source": SOURCE, "lengths": LENGTHS,
                "targets": {"median_abs_deviation_e2e_tpot_itl_throughput": TARGET_MAIN,
                            "median_abs_deviation_ttft": TARGET_TTFT, "max_abs_deviation": TARGET_MAX},
                "summary": s, "rows": rows}
    with open(out_json, "w") as f:
        json.dump(doc_data, f, indent=1, sort_keys=True)
        f.write("\n")
    lines = table(rows, s)
    replace_generated(doc, "serve-engines", lines)
    # README.md's line on the engines (beside DOC_MD's folder's parent), its numbers from the same rows.
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(doc))), "README.md")
    if os.path.exists(readme) and f"<!-- GENERATED serve-engines-headline" in open(readme).read():
        m, t = s["median_abs_deviation_e2e_tpot_itl_throughput"], s["median_abs_deviation_ttft"]
        met = "within" if s["meets_median_target"] and s["meets_ttft_target"] else "short of"
        replace_generated(readme, "serve-engines-headline", [
            "- `bitline serve` models the engines people run (`--engine vllm|vllm-v0|sglang|tensorrt-llm|ideal`);",
            f"  against SGLang's published vLLM-vs-SGLang runs it is within a median {m:.1%} (E2E, TPOT, ITL, throughput) and",
            f"  {t:.1%} (TTFT), {met} the 10% and 20% targets:",
            "  [docs/serving.md](docs/serving.md#engines-against-published-benchmark-runs);"])
    figure(rows, out_png)
    print("\n".join(lines[-3:]))
    print(f"wrote {out_json}, {out_png} and the serve-engines block of {doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
