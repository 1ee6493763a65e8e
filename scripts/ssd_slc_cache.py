#!/usr/bin/env python3
"""The SLC cache on real drives (docs/ssd.md, "SLC caching"; make ssd-drives).

Runs `bitline ssd run` on each drive of configs/ssd/drives/ with the fio-shaped fill workload
(fio/seqwrite-128k-qd32-fill.xml: 128 KiB sequential writes at queue depth 32 over an empty drive, well past its SLC
cache) and --throughput-bin, and writes the write bandwidth over time (JSON) and a chart of it beside the data
sheet's rates: the cached rate (the rated sequential write) and the rate after the cache (TurboWrite) is full.
The data sheet's figures and their sources come from configs/ssd/drives/measured.json. With DOC_MD, also the table
of both rates and when the cache filled between its `GENERATED slc-cache` markers (docs/ssd.md, "SLC caching").

usage: ssd_slc_cache.py BITLINE OUT_JSON OUT_PNG [DOC_MD]
"""
import json
import os
import subprocess
import sys
import tempfile

from plotting import pyplot, save
from ssd_drives import replace_generated

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVES = os.path.join(ROOT, "configs", "ssd", "drives")
WORKLOAD = "seqwrite-128k-qd32-fill"
BIN_S = 0.25  # seconds of simulated time per bandwidth bin


def run(binary, drive, tmp):
    out = os.path.join(tmp, f"{drive}.json")
    cmd = [binary, "ssd", "run", "--quiet", "--device", os.path.join(DRIVES, drive + ".xml"), "--workload",
           os.path.join(DRIVES, "fio", WORKLOAD + ".xml"), "--throughput-bin", str(BIN_S), "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)["scenarios"][0]


def phases(sc):
    """The series in MB/s, and the mean rate before the cache filled and after (whole bins only)."""
    tp = sc["throughput"]
    b = tp["bin_s"]
    mbps = [x / b / 1e6 for x in tp["bytes"]]
    full = sc["slc"]["full_at_s"]
    end = sc["simulated_s"]
    before = [m for i, m in enumerate(mbps) if full is None or (i + 1) * b <= full]
    after = [m for i, m in enumerate(mbps) if full is not None and i * b >= full and (i + 1) * b <= end]
    mean = lambda v: sum(v) / len(v) if v else None
    return mbps, mean(before), mean(after)


def datasheet(measured, drive):
    """The drive's rated cached and after-cache sequential write rates (MB/s) with their sources."""
    cached = after = None
    for fig in measured["figures"]:
        if fig["drive"] != drive or fig["measured"] is None or fig["kind"] != "spec":  # (reviews: their own workloads)
            continue
        if fig["workload"] == "seqwrite-128k-qd32":
            cached = {"MBps": fig["measured"], "source": fig["source"]}
        if fig["workload"] == WORKLOAD and fig.get("metric") == "after_cache":
            after = {"MBps": fig["measured"], "source": fig["source"]}
    return cached, after


def table(data):
    """The rates into and past the cache, bitline's beside the data sheet's."""
    def pair(sheet, mine):
        if mine is None:
            return "-"
        if not sheet:
            return f"none found / {mine:,.0f} MB/s"
        return f"{sheet['MBps']:,} / {mine:,.0f} MB/s ({mine / sheet['MBps'] - 1:+.0%})"
    out = ["| drive | into the cache: data sheet / bitline | cache full after | past the cache: data sheet / bitline |",
           "|---|---|---|---|"]
    for d in data["drives"].values():
        full = "-" if d["full_at_s"] is None else f"{d['full_at_s']:.1f} s, {d['slc']['capacity_bytes_at_end'] / 1e9:.0f} GB"
        out.append(f"| {d['name']} | {pair(d['datasheet_cached'], d['bitline_cached_MBps'])} | {full} | "
                   f"{pair(d['datasheet_after_cache'], d['bitline_after_cache_MBps'])} |")
    return out


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    binary, out_json, out_png = sys.argv[1:4]
    with open(os.path.join(DRIVES, "measured.json")) as f:
        measured = json.load(f)
    data = {"workload": f"configs/ssd/drives/fio/{WORKLOAD}.xml", "bin_s": BIN_S, "drives": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for drive in measured["drives"]:
            sc = run(binary, drive, tmp)
            mbps, before, after = phases(sc)
            cached, post = datasheet(measured, drive)
            data["drives"][drive] = {
                "name": measured["drives"][drive], "bandwidth_MBps": mbps, "full_at_s": sc["slc"]["full_at_s"],
                "bytes_written": sc["flows"][0]["bytes_written"], "simulated_s": sc["simulated_s"],
                "bitline_cached_MBps": before, "bitline_after_cache_MBps": after, "slc": sc["slc"],
                "datasheet_cached": cached, "datasheet_after_cache": post}
    os.makedirs(os.path.dirname(os.path.abspath(out_json)), exist_ok=True)
    with open(out_json, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)

    plt = pyplot()
    drives = list(data["drives"].values())
    fig, axes = plt.subplots(1, len(drives), figsize=(6.2 * len(drives), 4.0), squeeze=False)
    for ax, d in zip(axes[0], drives):
        whole = [m for i, m in enumerate(d["bandwidth_MBps"]) if (i + 1) * BIN_S <= d["simulated_s"]]  # (no partial last bin)
        t = [(i + 0.5) * BIN_S for i in range(len(whole))]
        ax.plot(t, whole, color="tab:blue", lw=1.4, label="bitline (128 KiB sequential writes, QD32)")
        if d["datasheet_cached"]:
            ax.axhline(d["datasheet_cached"]["MBps"], color="tab:green", ls="--", lw=1.2,
                       label=f"data sheet: into the SLC cache, {d['datasheet_cached']['MBps']:,} MB/s")
        if d["datasheet_after_cache"]:
            ax.axhline(d["datasheet_after_cache"]["MBps"], color="tab:red", ls="--", lw=1.2,
                       label=f"data sheet: after the cache, {d['datasheet_after_cache']['MBps']:,} MB/s")
        if d["full_at_s"] is not None:
            ax.axvline(d["full_at_s"], color="0.5", ls=":", lw=1.2,
                       label=f"bitline: cache full at {d['full_at_s']:.1f} s")
        ax.set_title(d["name"])
        ax.set_xlabel("simulated time (s)")
        ax.set_ylabel("write bandwidth (MB/s)")
        ax.set_ylim(0, max(max(d["bandwidth_MBps"]), (d["datasheet_cached"] or {"MBps": 0})["MBps"]) * 1.15)
        ax.set_xlim(0, d["simulated_s"])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc="lower left")
    save(fig, out_png)
    for d in drives:
        print(f"{d['name']}: bitline {d['bitline_cached_MBps']:.0f} MB/s cached, full at {d['full_at_s']} s, "
              f"{d['bitline_after_cache_MBps']:.0f} MB/s after", file=sys.stderr)
    if len(sys.argv) == 5:
        replace_generated(sys.argv[4], "slc-cache", table(data))
    print(f"wrote {out_json} and {out_png}", file=sys.stderr)


if __name__ == "__main__":
    main()
