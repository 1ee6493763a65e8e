#!/usr/bin/env python3
"""Charts and the docs table of `bitline cosmos ssb` (matplotlib, Debian python3-matplotlib).

  plot_ssb.py SSB_JSON FLASH_JSON OUT_DIR [DOCS_MD]

SSB_JSON: a functional run (`cosmos ssb --sf 1`, default aggregation); FLASH_JSON: the same SF with
`--aggregation flash` (timing-only is enough). Writes OUT_DIR/ssb-speedup.png (per query, FC's speedup and energy
efficiency over each other system: simulated OSP, ISP, ParaBit, and CRoaring and the row engine measured on this
machine, hatched) and OUT_DIR/ssb-aggregation.png (FC's and OSP's time per query under both aggregation strategies).
With DOCS_MD, rewrites the table between the markers <!-- GENERATED ssb-table --> and <!-- END GENERATED ssb-table -->.
"""
import json
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIMULATED = ["osp", "isp", "parabit"]
MEASURED = ["roaring", "row"]
LABEL = {"osp": "OSP", "isp": "ISP", "parabit": "ParaBit", "fc": "FC", "roaring": "CRoaring (measured)", "row": "row engine (measured)"}


def ratios(run, key):
    out = {}
    for s in SIMULATED + MEASURED:
        vals = []
        for q in run["queries"]:
            sy = q["systems"]
            vals.append(sy[s][key] / sy["fc"][key] if s in sy and sy["fc"][key] > 0 else float("nan"))
        out[s] = vals
    return out


def speedup_figure(run, path):
    names = [q["name"] for q in run["queries"]]
    fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    for ax, key, ylabel in [(axes[0], "time_s", "FC speedup (x)"), (axes[1], "energy_j", "FC energy efficiency (x)")]:
        r = ratios(run, key)
        systems = [s for s in SIMULATED + MEASURED if any(v == v for v in r[s])]
        width = 0.8 / len(systems)
        for i, s in enumerate(systems):
            ax.bar([x + i * width for x in range(len(names))], r[s], width, label=LABEL[s], hatch="//" if s in MEASURED else None,
                   edgecolor="white" if s in MEASURED else None)
        ax.axhline(1.0, color="k", lw=1, ls="--")
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    axes[1].set_xticks([x + 0.4 - 0.4 / len(names) for x in range(len(names))], names)
    axes[0].legend(ncol=5, fontsize=8)
    axes[0].set_title(f"SSB at SF {run['sf']:g}: other system's time (energy) / Flash-Cosmos's, per query (above 1: FC wins)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def aggregation_figure(host, flash, path):
    names = [q["name"] for q in host["queries"]]
    fq = {q["name"]: q for q in flash["queries"]}
    fig, ax = plt.subplots(figsize=(12, 4))
    series = [("fc", host, "FC, host aggregation (default)"), ("osp", host, "OSP, host aggregation"),
              ("fc", None, "FC, flash aggregation"), ("osp", None, "OSP, flash aggregation")]
    width = 0.8 / len(series)
    for i, (s, run, label) in enumerate(series):
        vals = [(q["systems"][s]["time_s"] if run else fq[q["name"]]["systems"][s]["time_s"]) * 1e3 for q in host["queries"]]
        ax.bar([x + i * width for x in range(len(names))], vals, width, label=label)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(names))], names)
    ax.set_yscale("log")
    ax.set_ylabel("time per query (ms)")
    ax.set_title(f"SSB at SF {host['sf']:g}: the two aggregation strategies (every fc_read moves one full result bitmap)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(host, flash):
    fq = {q["name"]: q for q in flash["queries"]}
    head = ("| query | rows selected | fc_reads | FC ms | OSP ms | ISP ms | ParaBit ms | CRoaring ms* | row engine ms* "
            "| FC vs OSP / ISP / ParaBit | FC energy vs OSP | flash aggregation: reads, FC ms, FC vs OSP |")
    lines = [head, "|" + "---|" * 12]
    for q in host["queries"]:
        s = q["systems"]
        ms = {k: s[k]["time_s"] * 1e3 for k in s}
        f = fq[q["name"]]
        lines.append(
            f"| {q['name']} | {q['rows_selected']:,} | {q['reads']} | {ms['fc']:.2f} | {ms['osp']:.2f} | {ms['isp']:.2f} | "
            f"{ms['parabit']:.2f} | {ms.get('roaring', float('nan')):.1f} | {ms.get('row', float('nan')):.0f} | "
            f"{ms['osp'] / ms['fc']:.2f} / {ms['isp'] / ms['fc']:.2f} / {ms['parabit'] / ms['fc']:.2f} | "
            f"{s['osp']['energy_j'] / s['fc']['energy_j']:.2f} | {f['reads']:,}, {f['systems']['fc']['time_s'] * 1e3:.1f}, "
            f"{f['systems']['osp']['time_s'] / f['systems']['fc']['time_s']:.1f} |")
    sm, me = host["summary"], host.get("measured", {}).get("summary", {})
    lines.append(
        f"| geomean | | | | | | | | | {sm['speedup']['fc/osp']:.2f} / {sm['speedup']['fc/isp']:.2f} / {sm['speedup']['fc/parabit']:.2f} | "
        f"{sm['energy_efficiency']['fc/osp']:.2f} | FC vs OSP {flash['summary']['speedup']['fc/osp']:.1f} |")
    lines.append("")
    lines.append(f"\\* measured on this machine (minimum of {host['measured']['host_repeat']} runs): FC vs CRoaring "
                 f"{me['speedup']['fc/roaring']:.1f}x (energy {me['energy_efficiency']['fc/roaring']:.1f}x), vs the row engine "
                 f"{me['speedup']['fc/row']:.1f}x (energy {me['energy_efficiency']['fc/row']:.1f}x), geometric means; "
                 f"answers equal to the reference: {sm['matches_reference']}.")
    return "\n".join(lines)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        sys.exit(2)
    host, flash = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    out = sys.argv[3]
    speedup_figure(host, f"{out}/ssb-speedup.png")
    aggregation_figure(host, flash, f"{out}/ssb-aggregation.png")
    if len(sys.argv) == 5:
        doc = open(sys.argv[4]).read()
        new, n = re.subn(r"(<!-- GENERATED ssb-table[^>]*-->\n).*?(<!-- END GENERATED ssb-table -->)",
                         lambda m: m.group(1) + table(host, flash) + "\n" + m.group(2), doc, flags=re.S)
        if n != 1:
            print(f"{sys.argv[4]}: no ssb-table markers", file=sys.stderr)
            sys.exit(1)
        open(sys.argv[4], "w").write(new)


if __name__ == "__main__":
    main()
