#!/usr/bin/env python3
"""Paper vs bitline.

  validation.py table EVAL_JSON          print the Flash-Cosmos summary against the paper
  validation.py accel ACCEL_EVAL_JSON    print the FlashAccel figures against the paper
  validation.py docs BITLINE OUT.md      run every validation experiment and write OUT.md

Standard library only. The paper's figures come from scripts/paper_figures.json.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER = json.load(open(os.path.join(HERE, "paper_figures.json")))


def verdict(model, paper, tol):
    dev = model / paper - 1.0
    ok = abs(dev) <= tol
    return dev, ("within" if ok else "KNOWN GAP")


def cosmos_rows(ev):
    fc = PAPER["flash_cosmos"]
    rows = []
    for what in ("speedup", "energy_efficiency"):
        for pair, paper in fc[what].items():
            model = ev["summary"][what][pair]["overall"]
            dev, v = verdict(model, paper, fc["tolerance"])
            rows.append((f"{what.replace('_', ' ')} {pair}", paper, model, dev, f"{v} ±{int(fc['tolerance']*100)}%"))
    return rows


def accel_rows(ev):
    fa = PAPER["flashaccel"]
    rows = []
    model = ev["summary"]["throughput_vs_h200x8"]["csix8@100"]["mean"]
    dev, v = verdict(model, fa["csix8_vs_h200x8_at_100ms"], fa["csix8_tolerance"])
    rows.append(("8xCSI / 8xH200 tokens/s/GPU @100ms", fa["csix8_vs_h200x8_at_100ms"], model, dev, f"{v} ±20%"))

    def point(system):
        for p in ev["points"]:
            if p["model"] == "llama3.1-405b" and p["context"] == "agent" and p["slo_ms"] == 50 and p["system"] == system:
                return p
        return {}
    b = point("h200x8").get("batch", float("nan"))
    dev, v = verdict(b, fa["llama_agent_h200x8_batch"], fa["llama_tolerance"])
    rows.append(("Llama-405B 15K/6K batch, 8xH200", fa["llama_agent_h200x8_batch"], b, dev, f"{v} ±15%"))
    # The paper's ~110 is what 8 x CSI "could in theory reach": the bandwidth bound (bytes at peak bandwidth).
    csi = point("csix8")
    b = csi.get("bandwidth_bound_batch", float("nan"))
    dev, v = verdict(b, fa["llama_agent_csix8_batch_at_50ms"], fa["llama_tolerance"])
    rows.append(("Llama-405B 15K/6K 8xCSI @50ms, bandwidth bound", fa["llama_agent_csix8_batch_at_50ms"], b, dev, f"{v} ±15%"))
    rows.append(("Llama-405B 15K/6K 8xCSI @50ms, full step", None, csi.get("batch", float("nan")), None,
                 "reported (under the bound: collectives, kernel overheads)"))
    return rows


SYSTEMS = ["h200x8", "h200x16", "csix4", "csix8", "csix16", "clix4", "clix8", "clix16"]
ABLATION = [("full", "full FlashAccel"), ("no_prefetch", "no prefetch"), ("no_weight_layout", "no weight layout"),
            ("no_kv_layout", "no KV layout"), ("plain_hbf", "plain HBF"), ("hbm_only", "HBM only (H200)")]
PARTS = ["weights", "kv", "compute", "communication", "overhead", "exposed_flash_latency", "kv_write", "kv_erase"]


def accel_tables(acc, abl):
    """The result tables of docs/llm.md (between its GENERATED markers)."""
    pts = {(p["model"], p["context"], p["slo_ms"], p["system"]): p for p in acc["points"]}
    keys = sorted({(p["model"], p["context"], p["slo_ms"]) for p in acc["points"]},
                  key=lambda k: (["qwen3-235b", "qwen3-coder-480b", "llama3.1-405b", "deepseek-v3"].index(k[0])
                                 if k[0] in ("qwen3-235b", "qwen3-coder-480b", "llama3.1-405b", "deepseek-v3") else 9,
                                 ["long", "agent"].index(k[1]) if k[1] in ("long", "agent") else 9, k[2]))
    out = ["Per-GPU decode throughput (tokens/s per GPU; in brackets the system's batch,",
           "`c` = capacity-bound, otherwise SLO-bound; - = infeasible):", "",
           "| model | ctx | SLO | " + " | ".join(SYSTEMS) + " |", "|---|---|---|" + "---|" * len(SYSTEMS)]
    for m, c, slo in keys:
        cells = []
        for sy in SYSTEMS:
            p = pts.get((m, c, slo, sy))
            if not p or not p["feasible"]:
                cells.append("-")
            else:
                cells.append(f"{p['tokens_per_s_per_gpu']:.0f} ({p['batch']}{'c' if p['bound_by'] == 'capacity' else ''})")
        out.append(f"| {m} | {c} | {slo:g} | " + " | ".join(cells) + " |")
    out += ["", "Summary against 8 x H200 (mean / geomean of per-point ratios over the points where both are feasible):", "",
            "| system@SLO | throughput | tokens/J | points |", "|---|---|---|---|"]
    thr, tpj = acc["summary"]["throughput_vs_h200x8"], acc["summary"]["tokens_per_j_vs_h200x8"]
    order = [f"{sy}@{slo}" for slo in (100, 50) for sy in SYSTEMS]
    for key, v in sorted(thr.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
        if v["mean"] is None:
            out.append(f"| {key} | - | - | 0 |")
            continue
        out.append(f"| {key} | {v['mean']:.2f}x / {v['geomean']:.2f}x | {tpj[key]['mean']:.2f}x | {v['points']} |")
    ctx = abl["context"]
    out += ["", f"Ablation ({abl['model']} on {abl['gpus']} x CSI, {abl['batch_per_rank']} requests per GPU, context "
            f"{ctx['name']} ({ctx['input']}:{ctx['output']}); step and its critical-path breakdown in ms):", "",
            "| variant | step | " + " | ".join(p.replace("_", " ") for p in PARTS) + " | fits | tokens/s/GPU at 100 ms (batch) |",
            "|---|---|" + "---|" * len(PARTS) + "---|---|"]
    for key, name in ABLATION:
        v = abl["variants"].get(key)
        if not v:
            continue
        b = v["breakdown_ms"]
        bound = "" if v.get("bound_by_at_100ms") == "slo" else ", " + str(v.get("bound_by_at_100ms"))
        out.append(f"| {name} | {v['step_ms']:.1f} | " + " | ".join(f"{b.get(p, 0.0):.2f}" for p in PARTS) +
                   f" | {'yes' if v['fits'] else 'no'} | {v['tokens_per_s_per_gpu_at_100ms']:.0f} ({v['batch_at_100ms']}{bound}) |")
    return out


def replace_generated(path, name, lines):
    begin, end = f"<!-- GENERATED {name}: make validate -->", f"<!-- END GENERATED {name} -->"
    text = open(path).read()
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: markers for {name} missing")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(path, "w").write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


def num(x):
    """Counts as integers, other figures to 3 significant digits (2.00, not 2)."""
    if x is None:
        return "-"
    if isinstance(x, int) or (float(x).is_integer() and abs(x) >= 10):
        return f"{x:.0f}"
    return f"{x:#.3g}"


def print_table(rows):
    print(f"{'figure':<46} {'paper':>8} {'bitline':>9} {'diff':>8}  verdict")
    for name, paper, model, dev, v in rows:
        d = f"{dev:>+7.1%}" if dev is not None else f"{'-':>7}"
        print(f"{name:<46} {num(paper):>8} {num(model):>9} {d}  {v}")


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        ev = json.load(open(sys.argv[2]))
        print("\nFlash-Cosmos (MICRO 2022) vs bitline, overall = geometric mean over BMI, IMS, KCS:")
        print_table(cosmos_rows(ev))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "accel":
        ev = json.load(open(sys.argv[2]))
        print("\nFlashAccel (2026) vs bitline:")
        print_table(accel_rows(ev))
        return
    if len(sys.argv) != 4 or sys.argv[1] != "docs":
        print(__doc__)
        sys.exit(2)
    binary, out = sys.argv[2], sys.argv[3]
    fc = PAPER["flash_cosmos"]
    with tempfile.TemporaryDirectory() as tmp:
        ev_path, wb_path, rel_path, rel36_path = (os.path.join(tmp, n) for n in ("eval.json", "wbw.json", "rel.json", "rel36.json"))
        run([binary, "cosmos", "eval", "--quiet", "--json", ev_path])
        run([binary, "cosmos", "write-bw", "--json", wb_path])
        run([binary, "cosmos", "reliability", "--trials", "10", "--set", "workload.users=1000000", "--json", rel_path])
        run([binary, "cosmos", "reliability", "--trials", "40", "--operands", "36", "--set", "workload.users=1000000",
             "--json", rel36_path])
        ev, wb, rel, rel36 = (json.load(open(p)) for p in (ev_path, wb_path, rel_path, rel36_path))
        acc_path = os.path.join(tmp, "accel.json")
        run([binary, "accel", "eval", "--quiet", "--json", acc_path])
        acc = json.load(open(acc_path))
        abl_path = os.path.join(tmp, "ablation.json")
        run([binary, "accel", "ablation", "--json", abl_path])
        abl = json.load(open(abl_path))
    replace_generated(os.path.join(HERE, "..", "docs", "llm.md"), "accel-results", accel_tables(acc, abl))
    rows = cosmos_rows(ev)
    esp = wb["gb_per_s"]["esp"]
    dev, v = verdict(esp, fc["esp_write_gb_per_s"], fc["esp_write_tolerance"])
    rows.append(("ESP sequential write (GB/s)", fc["esp_write_gb_per_s"], esp, dev, f"{v} ±20%"))
    frac = rel["slc_no_esp"]["fraction_exact"]
    ok = abs(frac - fc["reliability_fraction_exact_no_esp"]) <= fc["reliability_tolerance_abs"]
    rows.append(("BMI m=36 (1080 ops) exact, no ESP", fc["reliability_fraction_exact_no_esp"], frac,
                 frac - fc["reliability_fraction_exact_no_esp"], "within ±0.1" if ok else "KNOWN GAP"))
    frac36 = rel36["slc_no_esp"]["fraction_exact"]
    ok36 = abs(frac36 - fc["reliability_fraction_exact_no_esp"]) <= fc["reliability_tolerance_abs"]
    rows.append(("BMI 36 operands exact, no ESP", fc["reliability_fraction_exact_no_esp"], frac36,
                 frac36 - fc["reliability_fraction_exact_no_esp"], "within ±0.1" if ok36 else "KNOWN GAP"))
    rows.append(("BMI m=36 exact, ESP", 1.0, rel["esp"]["fraction_exact"], rel["esp"]["fraction_exact"] - 1.0,
                 "within" if rel["esp"]["fraction_exact"] == 1.0 else "KNOWN GAP"))
    lines = ["# Validation: paper vs bitline", "",
             "Regenerate with `make validate` (runs `scripts/validation.py docs`). Every number below comes out of",
             "the model at its default configuration; nothing is tuned to the paper.", "",
             "## Flash-Cosmos (MICRO 2022)", "",
             "| figure | paper | bitline | diff | verdict |", "|---|---|---|---|---|"]
    for name, paper, model, d, verdict_text in rows:
        lines.append(f"| {name} | {num(paper)} | {num(model)} | {d:+.1%} | {verdict_text} |")
    lines += ["", "Per workload (arithmetic mean of per-point ratios):", "",
              "| pair | metric | BMI | IMS | KCS | overall |", "|---|---|---|---|---|---|"]
    for what in ("speedup", "energy_efficiency"):
        for pair, v in ev["summary"][what].items():
            lines.append(f"| {pair} | {what.replace('_', ' ')} | {v['bmi']:.3g} | {v['ims']:.3g} | {v['kcs']:.3g} | {v['overall']:.3g} |")
    lines += ["", f"Sequential write bandwidth (GB/s): " + ", ".join(f"{k} {v:.2f}" for k, v in wb["gb_per_s"].items()), "",
              f"Reliability experiment: {rel['users']} users, {rel['operands']} operands, {rel['slc_no_esp']['trials']} queries per case; "
              f"without ESP {rel['slc_no_esp']['bit_errors']} cells sensed wrong and {rel['slc_no_esp']['wrong_result_bits']} wrong result bits; "
              f"with ESP {rel['esp']['bit_errors']} cells wrong over {rel['esp']['cells_sensed']:.3g} sensed. "
              f"The spec words it as 'a BMI query over 36 operands': with 36 operands ({rel36['slc_no_esp']['trials']} queries, "
              f"{rel36['users']} users) the fraction exact is {frac36:.2f}; both depend on the synthetic data (see the gaps below).", "",
              f"Evaluation run: {len(ev['points'])} points, {ev['run']['events']} events.", ""]
    lines += ["## FlashAccel (2026)", "", "| figure | paper | bitline | diff | verdict |", "|---|---|---|---|---|"]
    arows = accel_rows(acc)
    for name, paper, model, d, verdict_text in arows:
        ds = f"{d:+.1%}" if d is not None else "-"
        lines.append(f"| {name} | {num(paper)} | {num(model)} | {ds} | {verdict_text} |")
    lines += ["", "Per-GPU decode throughput and tokens per joule against 8 x H200 (mean over the points where both are feasible):", "",
              "| system@SLO (ms) | throughput mean | geomean | tokens/J mean | points |", "|---|---|---|---|---|"]
    for key, v in acc["summary"]["throughput_vs_h200x8"].items():
        tj = acc["summary"]["tokens_per_j_vs_h200x8"].get(key, {}).get("mean", float("nan"))
        lines.append(f"| {key} | {v['mean']:.2f} | {v['geomean']:.2f} | {tj:.2f} | {v['points']} |")
    infeasible = [p for p in acc["points"] if not p["feasible"]]
    lines += ["", f"Infeasible points ({len(infeasible)}), listed with their reason in the eval JSON: " +
              ", ".join(f"{p['model']}/{p['context']}/{p['slo_ms']}ms/{p['system']}" for p in infeasible), "",
              "Details of the FlashAccel model and its gaps: docs/llm.md.", ""]
    rows += arows
    gaps = os.path.join(HERE, "..", "docs", "validation-gaps.md")
    if os.path.exists(gaps):
        lines += [open(gaps).read()]
    open(out, "w").write("\n".join(lines) + "\n")
    print_table(rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
