#!/usr/bin/env python3
"""The general SSD against real drives (docs/ssd.md, "Against real drives"; make ssd-drives).

Runs `bitline ssd run` for every drive of configs/ssd/drives/ on every fio-shaped workload of
configs/ssd/drives/fio/ that configs/ssd/drives/measured.json has a figure (or a null figure) for, and writes the
table drive | workload | measured | source | bitline | deviation between the GENERATED markers of docs/ssd.md.

usage: ssd_drives.py BITLINE [DOC]     (DOC: the markdown file to update; default docs/ssd.md)
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVES = os.path.join(ROOT, "configs", "ssd", "drives")


def run(binary, drive, workload, tmp):
    out = os.path.join(tmp, f"{drive}-{workload}.json")
    cmd = [binary, "ssd", "run", "--quiet", "--device", os.path.join(DRIVES, drive + ".xml"), "--workload",
           os.path.join(DRIVES, "fio", workload + ".xml"), "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        sc = json.load(f)["scenarios"][0]
    return {"IOPS": sc["iops"], "MB/s": sc["flows"][0]["bandwidth_Bps"] / 1e6}


def fmt(x, unit):
    return f"{x:,.0f}" if unit == "IOPS" else f"{x:,.0f} MB/s"


def replace_generated(path, name, lines):
    begin, end = f"<!-- GENERATED {name}: make ssd-drives -->", f"<!-- END GENERATED {name} -->"
    with open(path) as f:
        text = f.read()
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        sys.exit(f"{path}: no {begin} ... {end} markers")
    text = text[: a + len(begin)] + "\n" + "\n".join(lines) + "\n" + text[b:]
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    binary = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) == 3 else os.path.join(ROOT, "docs", "ssd.md")
    with open(os.path.join(DRIVES, "measured.json")) as f:
        m = json.load(f)
    results = {}
    lines = ["| drive | workload | measured | source | bitline | deviation |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for fig in m["figures"]:
            key = (fig["drive"], fig["workload"])
            if key not in results:
                results[key] = run(binary, *key, tmp)
            model = results[key][fig["unit"]]
            name = m["drives"][fig["drive"]]
            wl = fig["workload"] + (f" ({fig['note']})" if fig.get("note") else "")
            if fig["measured"] is None:
                meas, dev = "-", "-"
            else:
                meas = fmt(fig["measured"], fig["unit"]) + f" ({fig['kind']})"
                d = 100.0 * (model / fig["measured"] - 1.0)
                dev = f"{d:+.0f}%" + (" **>15%**" if abs(d) > 15 else "")
            lines.append(f"| {name} | {wl} | {meas} | {fig['source']} | {fmt(model, fig['unit'])} | {dev} |")
    print("\n".join(lines))
    replace_generated(doc, "drives", lines)


if __name__ == "__main__":
    main()
