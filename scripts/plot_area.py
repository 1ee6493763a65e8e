#!/usr/bin/env python3
"""Chart of the HBF stack's area and density against layer count, beside HBM3e (matplotlib, Debian
python3-matplotlib; style of plot_accel.py).

  plot_area.py AREA.json OUTDIR [DOC_MD]

AREA.json is the output of a layer sweep of `bitline hbf area`, e.g.

  bitline hbf area --preset csi --vary hbf.area.periphery=bonded,beside \\
      --vary hbf.area.layers=64,96,128,176,232,300,400,512 --json results/hbf-area.json

(the periphery key is optional). Writes OUTDIR/hbf-area.png (byte-for-byte the same for the same input): left,
the stack footprint and its flash die's array and circuit dies in mm2; right, the density in GiB/mm2; HBM3e (the
model's) as a line, and FlashAccel's figures (Wang et al., arXiv 2607.10186: HBF 149 mm2 at 96 layers, HBM3e
121 mm2; 192 GB and 24 GB per stack; scripts/paper_figures.json hbf_area) as marked points; the legends below the
panels. `make validate` regenerates docs/figures/ with it. With DOC_MD (docs/hbf.md), also the tables between its
`GENERATED hbf-area` and `GENERATED hbf-area-layers` markers: the 96-layer stack against the paper's figures, and the
footprint by layer count.
"""
import json
import os
import sys

from plotting import pyplot, save  # noqa: E402

plt = pyplot()

# FlashAccel's stack figures (its HBF stack at its die's layer count, the HBM3e stack).
PAPER = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "paper_figures.json")))["hbf_area"]

GIB = float(1 << 30)
LAYERS = "hbf.area.layers"
PERIPHERY = "hbf.area.periphery"


def series(doc):
    """{periphery: [(layers, point), ...] sorted by layers} from the sweep's points."""
    if LAYERS not in doc.get("vary", {}):
        sys.exit(f"plot_area.py: the input is not a layer sweep (no --vary {LAYERS}=...)")
    base = doc.get("config", {}).get("hbf", {}).get("area", {}).get("periphery", "bonded")
    out = {}
    for p in doc["points"]:
        kind = p["values"].get(PERIPHERY, base)
        out.setdefault(kind, []).append((int(p["values"][LAYERS]), p))
    for kind in out:
        out[kind].sort(key=lambda lp: lp[0])
    return out


def plot(doc, outdir):
    by_kind = series(doc)
    first = next(iter(by_kind.values()))[0][1]
    paper = PAPER
    hbm = first["area"]["hbm3e_stack"]
    hbf_cap = first["area"]["hbf_stack"]["capacity_bytes"] / GIB
    hbm_cap = hbm["capacity_bytes"] / GIB
    styles = {"bonded": ("tab:blue", "-"), "beside": ("tab:purple", "--")}
    fig, (ax_a, ax_d) = plt.subplots(1, 2, figsize=(11, 5.0))
    all_layers = sorted({lp[0] for s in by_kind.values() for lp in s})
    for kind, pts in by_kind.items():
        colour, line = styles.get(kind, ("tab:gray", "-"))
        layers = [lp[0] for lp in pts]
        hs = [lp[1]["area"]["hbf_stack"] for lp in pts]
        ax_a.plot(layers, [h["footprint_mm2"] for h in hs], line, color=colour, marker="o", ms=4,
                  label=f"HBF stack, circuits {kind} (bitline)")
        ax_d.plot(layers, [h["density_gib_per_mm2"] for h in hs], line, color=colour, marker="o", ms=4,
                  label=f"HBF, circuits {kind} (bitline)")
        if kind == "bonded":
            ax_a.plot(layers, [h["flash_die_mm2"]["array_die"] for h in hs], ":", color="tab:green",
                      label="  its array die (cells + TSVs)")
            ax_a.plot(layers, [h["flash_die_mm2"]["circuit_die"] for h in hs], ":", color="tab:orange",
                      label="  its circuit die (page buffers, SRAM, ...)")
    lo, hi = all_layers[0], all_layers[-1]
    ax_a.hlines(hbm["footprint_mm2"], lo, hi, colors="tab:red", label="HBM3e stack (bitline)")
    ax_d.hlines(hbm["capacity_bytes"] / GIB / hbm["footprint_mm2"], lo, hi, colors="tab:red", label="HBM3e (bitline)")
    # The paper's figures: the HBF stack at its layer count; HBM3e has no layer count (a dashed line).
    ax_a.plot([paper["layers"]], [paper["hbf_stack_mm2"]], "*", color="black", ms=13,
              label=f"HBF, paper ({paper['hbf_stack_mm2']:g} mm$^2$, {paper['layers']} layers)")
    ax_a.hlines(paper["hbm3e_stack_mm2"], lo, hi, colors="tab:red", linestyles="dashed",
                label=f"HBM3e, paper ({paper['hbm3e_stack_mm2']:g} mm$^2$)")
    ax_d.plot([paper["layers"]], [hbf_cap / paper["hbf_stack_mm2"]], "*", color="black", ms=13,
              label=f"HBF, paper ({paper['layers']} layers)")
    ax_d.hlines(hbm_cap / paper["hbm3e_stack_mm2"], lo, hi, colors="tab:red", linestyles="dashed", label="HBM3e, paper")
    ax_a.set_xlabel("word-line layers (hbf.area.layers)")
    ax_a.set_ylabel("stack footprint, mm$^2$ (its largest die)")
    ax_a.set_ylim(bottom=0)
    ax_a.set_title(f"Area of one stack ({hbf_cap:.0f} GiB HBF, {hbm_cap:.0f} GiB HBM3e)")
    ax_a.grid(alpha=0.3)
    ax_d.set_xlabel("word-line layers (hbf.area.layers)")
    ax_d.set_ylabel("density, GiB per mm$^2$ of footprint")
    ax_d.set_ylim(bottom=0)
    ax_d.set_title("Density: capacity / footprint")
    ax_d.grid(alpha=0.3)
    for ax in (ax_a, ax_d):  # below each panel: inside, the density legend covered the circuits-beside curve
        ax.legend(fontsize=7.5, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "hbf-area.png")
    save(fig, path)
    return path


LAYERS_SHOWN = [96, 128, 176, 232, 300, 400]


def deviation(area, figure):
    """bitline's figure (an `hbf area` point's result) against the paper's (paper_figures.json hbf_area), relative:
    hbf_stack and hbm3e_stack by footprint (mm^2), area_ratio and density_ratio as they are."""
    if figure in ("hbf_stack", "hbm3e_stack"):
        return area[figure]["footprint_mm2"] / PAPER[f"{figure}_mm2"] - 1
    return area["comparison"][figure] / PAPER[figure] - 1


def area_tables(doc):
    """{block name: lines} for docs/hbf.md: the paper's 96-layer stack against bitline's (bonded, and the circuits
    beside the array), and the bonded footprint by layer count."""
    by_kind = series(doc)
    at = {kind: dict(pts) for kind, pts in by_kind.items()}
    a = at["bonded"][96]["area"]
    c, paper = a["comparison"], PAPER
    rows = [("HBF stack area", f"{paper['hbf_stack_mm2']:g} mm^2", f"{a['hbf_stack']['footprint_mm2']:.1f} mm^2", "hbf_stack"),
            ("HBM3e stack area", f"{paper['hbm3e_stack_mm2']:g} mm^2", f"{a['hbm3e_stack']['footprint_mm2']:.1f} mm^2", "hbm3e_stack"),
            ("HBF / HBM3e area", f"{paper['area_ratio']:.2f}x", f"{c['area_ratio']:.3f}x", "area_ratio"),
            ("HBF / HBM3e density", f"{paper['density_ratio']:.2f}x", f"{c['density_ratio']:.3f}x", "density_ratio")]
    comparison = ["| figure | paper | bitline | deviation |", "|---|---|---|---|"]
    comparison += [f"| {n} | {p} | {m} | {deviation(a, k):+.1%} |" for n, p, m, k in rows]
    if 96 in at.get("beside", {}):
        b = at["beside"][96]["area"]
        comparison += ["", f"With the circuits beside the array (`hbf.area.periphery=beside`), 96 layers: "
                       f"{b['hbf_stack']['footprint_mm2']:.1f} mm^2 ({deviation(b, 'hbf_stack'):+.0%} from "
                       f"{paper['hbf_stack_mm2']:g} mm^2), HBF / HBM3e area {b['comparison']['area_ratio']:.2f}x, density "
                       f"{b['comparison']['density_ratio']:.2f}x."]
    layers = ["| layers | array die | circuit die | footprint | GiB/mm^2 | vs HBM3e: area | density |",
              "|---|---|---|---|---|---|---|"]
    for n in LAYERS_SHOWN:
        if n not in at["bonded"]:
            continue
        s = at["bonded"][n]["area"]
        h, f = s["hbf_stack"], s["hbf_stack"]["flash_die_mm2"]
        layers.append(f"| {n} | {f['array_die']:.2f} | {f['circuit_die']:.2f} | {h['footprint_mm2']:.2f} "
                      f"({h['limited_by'].split()[0]}) | {h['density_gib_per_mm2']:.2f} | {s['comparison']['area_ratio']:.2f}x | "
                      f"{s['comparison']['density_ratio']:.2f}x |")
    return {"hbf-area": comparison, "hbf-area-layers": layers}


def replace_generated(path, name, lines):
    """The same GENERATED markers as scripts/validation.py."""
    begin, end = f"<!-- GENERATED {name}: make validate -->", f"<!-- END GENERATED {name} -->"
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        sys.exit(f"{path}: markers for {name} missing")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    with open(argv[1]) as f:
        doc = json.load(f)
    print("wrote", plot(doc, argv[2]))
    if len(argv) == 4:
        for name, lines in area_tables(doc).items():
            replace_generated(argv[3], name, lines)
        print("wrote the hbf-area tables of", argv[3])


if __name__ == "__main__":
    main(sys.argv)
