#!/usr/bin/env python3
"""The general SSD against real drives (docs/ssd.md, "Against real drives"; make ssd-drives).

Runs `bitline ssd fio` for every drive of configs/ssd/drives/ on every fio job file of configs/ssd/drives/fio/ that
configs/ssd/drives/measured.json has a figure (or a null figure) for, at the --occupancy its header names (each .fio
gives the same flow and IOPS as its .xml twin, SsdFio.ShippedJobsEqualTheirXmlTwins), and writes the table
drive | workload | measured | source | bitline | deviation between the GENERATED markers of docs/ssd.md. A figure
with "metric": "after_cache" is compared with the run's write rate after the drive's SLC cache is full: the mean of
its whole bandwidth bins (--throughput-bin) from the first program that found the cache full (the run's
slc.full_at_s) to the run's end.

usage: ssd_drives.py BITLINE [DOC]     (DOC: the markdown file to update; default docs/ssd.md)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVES = os.path.join(ROOT, "configs", "ssd", "drives")


BIN_S = 0.25  # seconds of simulated time per bandwidth bin (after_cache figures)


def after_cache_MBps(sc):
    """The mean write rate (MB/s) of the whole bins after the SLC cache filled (None if it never did)."""
    full, b, end = sc["slc"]["full_at_s"], sc["throughput"]["bin_s"], sc["simulated_s"]
    if full is None:
        return None
    v = [x / b / 1e6 for i, x in enumerate(sc["throughput"]["bytes"]) if i * b >= full and (i + 1) * b <= end]
    return sum(v) / len(v) if v else None


def occupancy_of(job):
    """The --occupancy a shipped job file's header names (the drive's state before the job is not a fio option)."""
    with open(job) as f:
        m = re.search(r"^;.*--occupancy (\d+(?:\.\d+)?)", f.read(), re.M)
    if not m:
        sys.exit(f"{job}: no '--occupancy PCT' in its header comment")
    return m.group(1)


def run(binary, drive, workload, tmp):
    out = os.path.join(tmp, f"{drive}-{workload}.json")
    job = os.path.join(DRIVES, "fio", workload + ".fio")
    cmd = [binary, "ssd", "fio", job, "--quiet", "--device", os.path.join(DRIVES, drive + ".xml"), "--occupancy",
           occupancy_of(job), "--throughput-bin", str(BIN_S), "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        j = json.load(f)
    if len(j["jobs"]) != 1 or len(j["bitline"]["runs"]) != 1:
        sys.exit(f"{job}: one job in one group expected")
    job_json, sc = j["jobs"][0], j["bitline"]["runs"][0]
    r = {"IOPS": sum(job_json[d]["iops"] for d in ("read", "write")),
         "MB/s": sum(job_json[d]["bw_bytes"] for d in ("read", "write")) / 1e6}
    if "slc" in sc:
        r["after_cache MB/s"] = after_cache_MBps(sc)
    return r


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
            model = results[key][("after_cache " if fig.get("metric") == "after_cache" else "") + fig["unit"]]
            name = m["drives"][fig["drive"]]
            wl = fig["workload"] + (f" ({fig['note']})" if fig.get("note") else "")
            if model is None:
                sys.exit(f"{fig['drive']} {fig['workload']}: the run never filled the SLC cache (no rate after it)")
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
