#!/usr/bin/env python3
"""Draws any bitline result JSON as the natural chart for its kind (matplotlib, Debian python3-matplotlib).

  plot.py RESULT.json [OUT.png]          (default OUT: RESULT.png beside the input)

The kind is recognised from the JSON's keys:
  cosmos eval       -> speedup and energy efficiency (where the points have their energy) of every system over OSP
                       per workload point, the paper's FC/OSP average dashed; beside, FC's gain over OSP, ISP and
                       ParaBit averaged over the workloads, the paper's averages beside bitline's (the summary's
                       `overall`, as docs/validation.md)
  cosmos write-bw   -> write bandwidth per program mode, both schemes, the paper's ESP figure beside
  accel eval        -> per-GPU decode throughput of every system vs the baseline, per SLO, the paper's 2.49x marked;
                       beside, the paper's Llama-3.1-405B batches (15K/6K, 50 ms: 30 on 8 x H200, ~110 on 8 x CSI)
                       beside bitline's, where the eval holds that point
  accel sweep       -> tokens/s per GPU over the swept values (one line per value of the second key)
  accel ablation    -> the variants' decode step, stacked by part
  accel sessions    -> KV hit rate per system (over the load sweep)
  hbf area --vary   -> stack footprint and density over the swept values; over hbf.area.layers, the paper's HBF stack
                       (FlashAccel: 149 mm^2 at 96 layers) marked where 96 is swept
  cosmos ssb        -> FC's speedup per query over every system
  serve sweep       -> TTFT and TPOT percentiles against the throughput achieved, and the TTFT CDF per rate
                       (also --disaggregate)
  serve run         -> TTFT, TPOT, ITL, E2E and queueing percentiles and mean, token and request throughput and goodput,
                       each instance's busy share (colocated or --disaggregate); a run of one user that a real GPU was
                       measured on (scripts/paper_figures.json, batch 1) has the measured latency beside bitline's
  serve capacity    -> every probed rate's p90 TTFT, p99 TPOT and output tokens/s, meeting or missing the SLOs, and the
                       capacity found
  make serve-capacity (results/serve-capacity*.json, scripts/serve_capacity.py) -> the capacity of every model on every
                       system, `not served` where it does not fit or no rate meets the SLOs
Legends sit where they cover no bar, line or label (below or beside a panel); crowded x labels are turned on end or
thinned. The kinds not listed with a paper's or a measured figure have none published to draw.
Anything else is refused with exit 2 and the keys the file has. Same input, same bytes.

Exit codes: 0 the chart is written; 2 anything refused or failed, with one line on stderr starting `plot.py: ` that
names the file and, for a field, its key path, its value (briefly) and the reason:
  plot.py: r.json: points[3].time_s: -1: below 1e-12 (a ratio divides by it: bitline's times are whole picoseconds)
Nothing is written on a refusal or a failure: the chart goes to a temporary file beside OUT, renamed onto OUT only
once complete, so an old OUT is kept and no partial PNG is left.

What is checked, before anything is drawn (the limits are the MAX_* constants below):
  RESULT   a regular file (a directory, a device such as /dev/zero or a pipe is refused, never read) of at most
           64 MiB and 2^21 JSON values (a 10,000-point `accel sweep`, the largest result drawn, is ~36 MB and 1.2 M
           values; at the limit Python holds ~150 MB), nested at most 32 levels (as the C++ JSON readers; a result
           nests 7), UTF-8, no key twice in one object, no NaN or Infinity (nor a number past a double's range).
  fields   every field the chart reads: present, of its type, finite and in range. Numbers lie within
           [-1e15, 1e15] (far past any figure bitline writes: 1e15 s is 30 million years); times, throughputs and
           counts are not negative; times that divide others (speedups) and SLOs are at least 1e-12 (bitline's
           times are whole picoseconds); fractions lie in [0, 1]; names drawn as labels are strings of at most 200
           characters without `$` (matplotlib reads $...$ as a formula) or control characters.
  size     what keeps any accepted input under ~10 s on a slow 2-core machine (each at its limit draws in ~3 s on
           one; a chart of more could not be read anyway):
             accel sweep, hbf area  10,000 points (the C++ kMaxSweepPoints), 16 swept keys, 64 lines (one per
                                    combination of the keys after the first, each a legend entry); past 60 values
                                    on the x axis every n-th is labelled
             cosmos eval            2,000 runs (the paper's evaluation has 56; each is a bar under its own tick)
             accel eval             10,000 points (kMaxEvalPoints), 8 SLOs (a panel each), 256 systems x models
                                    (the bars of a panel)
             accel ablation         100 variants, 32 parts of the step (a real step has 10)
             accel sessions         64 loads, 16 systems
             cosmos ssb             200 queries (SSB has 13)
             serve sweep            256 rates (the C++ kMaxSweepPoints), each TTFT CDF 101 quantiles (as written)
             serve run              64 instances (past 8, a bar per role)
             serve capacity         256 probes; make serve-capacity 256 models x systems
  OUT      ends in `.png` (matplotlib would append .png to any other name: `plot.py r.json /dev/full` wrote
           /dev/full.png); is not an existing directory, device, pipe or other non-regular file, nor the input
           itself (same device and inode: links and ./ spellings are caught), nor read-only; its folder exists and
           is writable. A symbolic link is written through to the file it names.
"""
import json
import math
import os
import re
import stat
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from plotting import pyplot, save  # noqa: E402

plt = pyplot()

import plot_accel  # noqa: E402  (the FlashAccel charts)
import plot_cosmos  # noqa: E402  (the Flash-Cosmos charts)
import plot_serve  # noqa: E402  (the serving sweep's chart)

PAPER_HBF = json.load(open(os.path.join(HERE, "paper_figures.json")))["hbf_area"]

MAX_INPUT_BYTES = 64 << 20
MAX_VALUES = 1 << 21
MAX_DEPTH = 32
MAX_VALUE = 1e15
MIN_DIVISOR = 1e-12
MAX_TEXT = 200
MAX_SWEEP_POINTS = 10_000
MAX_SWEEP_KEYS = 16
MAX_SWEEP_LINES = 64
MAX_TICK_LABELS = 60
MAX_COSMOS_RUNS = 2_000
MAX_EVAL_POINTS = 10_000
MAX_EVAL_SLOS = 8
MAX_EVAL_BARS = 256
MAX_VARIANTS = 100
MAX_PARTS = 32
MAX_LOADS = 64
MAX_SESSION_SYSTEMS = 16
MAX_QUERIES = 200
MAX_RATES = 256
MAX_INSTANCES = 64
MAX_PROBES = 256
QUANTILES = 101
# In a label: `$` (matplotlib reads $...$ as a formula), control characters, lone surrogates (not UTF-8).
BAD_TEXT = re.compile("[$\x00-\x1f\ud800-\udfff]")
STRINGS_AND_SCALARS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\[\]{},"]+')
INNERMOST_PAIR = re.compile(r"\[\]|\{\}")
KINDS_DRAWN = ("cosmos eval, cosmos write-bw, cosmos ssb, accel eval, accel sweep, accel ablation, accel sessions, "
               "hbf area --vary, serve run, serve sweep, serve capacity, make serve-capacity")


class Refused(Exception):
    """An input or output plot.py does not draw: the message follows `plot.py: FILE: `."""


def fail(msg):
    print(f"plot.py: {msg}", file=sys.stderr)
    sys.exit(2)


def brief(v):
    """A value as a message shows it: at most 40 characters; an object or list by its size, never whole."""
    if isinstance(v, dict):
        return f"an object of {len(v)} key(s)"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    s = json.dumps(v)
    return s if len(s) <= 40 else s[:37] + "..."


def key_name(k):
    """A key as a path shows it: control characters escaped, at most 40 characters."""
    k = json.dumps(k, ensure_ascii=False)[1:-1] if BAD_TEXT.search(k) else k
    return k if len(k) <= 40 else k[:37] + "..."


class At:
    """A value of the input and the key path that reached it (`points[3].values`): the one validator of plot.py.

    Each accessor checks the value (type, finiteness, range, size) and returns it, or raises Refused with
    `PATH: VALUE: reason`; key(), items() and fields() return the children as At, their paths extended."""
    __slots__ = ("v", "path")

    def __init__(self, v, path=""):
        self.v, self.path = v, path

    def refuse(self, reason):
        raise Refused(f"{self.path or '(top level)'}: {brief(self.v)}: {reason}")

    def _child(self, k):
        return f"{self.path}.{key_name(k)}" if self.path else key_name(k)

    def obj(self, least=0, most=None):
        if not isinstance(self.v, dict):
            self.refuse("not an object")
        self._count(len(self.v), least, most, "key(s)")
        return self.v

    def key(self, k, optional=False, null=False):
        """The child `k`; None where it is absent and optional, or null and null is allowed."""
        if k not in self.obj():
            if optional:
                return None
            raise Refused(f"{self._child(k)}: missing: the chart draws it")
        return None if null and self.v[k] is None else At(self.v[k], self._child(k))

    def items(self, least=0, most=None):
        if not isinstance(self.v, list):
            self.refuse("not a list")
        self._count(len(self.v), least, most, "item(s)")
        return [At(x, f"{self.path}[{i}]") for i, x in enumerate(self.v)]

    def fields(self, least=0, most=None):
        """The (key, At) of an object whose keys are drawn as labels (each checked as text())."""
        for k in self.obj(least, most):
            At(k, f"{self._child(k)} (the key)").text()
        return [(k, At(v, self._child(k))) for k, v in self.v.items()]

    def _count(self, n, least, most, what):
        if n < least:
            self.refuse(f"at least {least} {what} needed")
        if most is not None and n > most:
            self.refuse(f"more than {most:,} {what}: past the size plot.py draws (see its docstring)")

    def num(self, lo=0.0, hi=MAX_VALUE, integer=False, why=""):
        """A finite number (an integer where asked) in [lo, hi]; bool is not a number. `why`: the reason for lo."""
        v = self.v
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
            self.refuse("not an integer" if integer else "not a number")
        if not -MAX_VALUE <= v <= MAX_VALUE:  # NaN too
            self.refuse(f"past +-{MAX_VALUE:g}: beyond any figure bitline writes")
        if v < lo:
            self.refuse(f"below {lo:g}{why}")
        if v > hi:
            self.refuse(f"above {hi:g}")
        return v

    def divisor(self):
        return self.num(lo=MIN_DIVISOR, why=" (a ratio divides by it: bitline's times are whole picoseconds)")

    def positive(self):
        return self.num(lo=MIN_DIVISOR, why=" (it must be positive)")

    def fraction(self):
        return self.num(hi=1.0)

    def text(self):
        """A string drawn as a label: at most MAX_TEXT characters, no `$` (mathtext) or control character."""
        v = self.v
        if not isinstance(v, str):
            self.refuse("not a string")
        if len(v) > MAX_TEXT:
            self.refuse(f"longer than {MAX_TEXT} characters")
        if BAD_TEXT.search(v):
            self.refuse("holds `$` (matplotlib reads $...$ as a formula), a control character or a lone surrogate")
        return v

    def scalar(self):
        """A label that is a string or a number (a swept value, a workload's input)."""
        return self.text() if isinstance(self.v, str) else self.num(lo=-MAX_VALUE)

    def flag(self):
        if not isinstance(self.v, bool):
            self.refuse("not true or false")
        return self.v


# ---- reading the input ----------------------------------------------------------------------------------------


def strict_object(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise Refused(f"the key {brief(dup)} appears twice in one object (which one is meant?)")
    return d


def no_constant(c):
    raise Refused(f"{c}: not a number JSON allows (NaN and Infinity are refused)")


def finite_float(s):
    v = float(s)
    if not math.isfinite(v):
        raise Refused(f"{brief(s)}: past a double's range")
    return v


def structure(text):
    """(values, deeper than MAX_DEPTH?) of the JSON `text`, from its commas and brackets outside strings, counted by
    regular expressions (C speed) before json.loads builds anything; the innermost bracket pairs are removed once per
    level. Brackets that do not pair up count as shallow: json.loads then says where the text is broken."""
    marks = STRINGS_AND_SCALARS.sub("", text)
    brackets = marks.replace(",", "")
    values = len(marks) - len(brackets) + len(brackets) // 2 + 1
    for _ in range(MAX_DEPTH):
        shorter = INNERMOST_PAIR.sub("", brackets)
        if len(shorter) == len(brackets):
            return values, False
        brackets = shorter
    return values, bool(brackets)


def read_json(src):
    """The JSON of the regular file `src`, or Refused (see the docstring's `RESULT`)."""
    try:
        # O_NONBLOCK: opening a pipe does not wait for a writer; its kind is then refused by fstat.
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise Refused(f"cannot open it ({e.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file (a directory, device or pipe is not a result)")
        if st.st_size > MAX_INPUT_BYTES:
            raise Refused(f"{st.st_size:,} bytes, more than {MAX_INPUT_BYTES:,}: larger than any result plot.py draws")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        raise Refused(f"cannot read it ({e.strerror})")
    finally:
        os.close(fd)
    if len(data) > MAX_INPUT_BYTES:
        raise Refused(f"more than {MAX_INPUT_BYTES:,} bytes: larger than any result plot.py draws")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refused(f"not UTF-8 text (byte {e.start})")
    too_deep = Refused(f"JSON nested deeper than {MAX_DEPTH} levels (a result nests 7)")
    values, deep = structure(text)
    if values > MAX_VALUES:
        raise Refused(f"about {values:,} JSON values, more than {MAX_VALUES:,}: larger than any result plot.py draws")
    try:
        j = json.loads(text, object_pairs_hook=strict_object, parse_constant=no_constant, parse_float=finite_float)
    except RecursionError:  # ~1,000 levels: Python's own limit
        raise too_deep
    except ValueError as e:
        raise Refused(f"not JSON ({e})")
    if deep:
        raise too_deep
    return j


# ---- the output path ------------------------------------------------------------------------------------------


def output_path(out, src):
    """The file to write for `out` (a link resolved), or Refused (see the docstring's `OUT`)."""
    if not out.endswith(".png"):
        raise Refused(f"{out}: the output must end in .png (matplotlib would write another name)")
    real = os.path.realpath(out)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise Refused(f"{out}: cannot check the output ({e.strerror})")
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise Refused(f"{out}: the output is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{out}: the output exists and is not a regular file (a device, pipe or socket)")
        src_st = os.stat(src)
        if (st.st_dev, st.st_ino) == (src_st.st_dev, src_st.st_ino):
            raise Refused(f"{out}: the output is the input itself")
        if not os.access(real, os.W_OK):
            raise Refused(f"{out}: the output exists and is read-only")
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise Refused(f"{out}: the output's folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise Refused(f"{out}: the output's folder {folder} is not writable")
    return real


def write_atomically(draw, j, real):
    """draw(j, TMP) to a temporary .png beside `real`, then renamed onto it; the temporary is removed on failure."""
    folder, name = os.path.split(real)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp.png", dir=folder)
    os.close(fd)
    try:
        draw(j, tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a file created by open(): mkstemp makes it 0600
        os.replace(tmp, real)
    finally:
        plt.close("all")
        if os.path.exists(tmp):
            os.unlink(tmp)


# ---- the kinds: how each is recognised, checked and drawn ------------------------------------------------------


def first_point_has(j, key, listed="points"):
    pts = j.get(listed)
    return isinstance(pts, list) and bool(pts) and isinstance(pts[0], dict) and key in pts[0]


def kind_of(j):
    if not isinstance(j, dict):
        return None
    keys = set(j)
    if {"gb_per_s", "modes"} <= keys:
        return "write-bw"
    if "summary" in keys and first_point_has(j, "workload"):
        return "cosmos-eval"
    if "summary" in keys and first_point_has(j, "tokens_per_s_per_gpu"):
        return "accel-eval"
    if "vary" in keys and first_point_has(j, "area"):
        return "hbf-area"
    if "vary" in keys and first_point_has(j, "tokens_per_s_per_gpu"):
        return "accel-sweep"
    if "variants" in keys:
        return "accel-ablation"
    if "systems" in keys and ("loads" in keys or "hit_rate" in str(j.get("systems"))[:2000]):
        return "accel-sessions"
    if first_point_has(j, "systems", "queries"):
        return "cosmos-ssb"
    if first_point_has(j, "cdf"):
        return "serve-sweep"
    if "probes" in keys and "capacity_requests_per_s" in keys:
        return "serve-capacity"
    if "experiment" in keys and first_point_has(j, "capacity_requests_per_s"):
        return "serve-capacity-experiment"
    if isinstance(j.get("summary"), dict) and "ttft_ms" in j["summary"] and "points" not in keys:
        return "serve-run"
    return None


def check_title(j, *keys):
    """Optional strings (or numbers) of a title: `model`, `system`, ..."""
    for k in keys:
        v = j.key(k, optional=True)
        if v is not None:
            v.scalar()


def check_cosmos_eval(j):
    for p in j.key("points").items(least=1, most=MAX_COSMOS_RUNS):
        p.key("workload").text()
        p.key("system").text()
        param = p.key("param")
        param.key(next(iter(param.obj(least=1)))).num(lo=-MAX_VALUE)
        p.key("time_s").divisor()
        if p.key("energy_j", optional=True) is not None:
            p.key("energy_j").divisor()
    if not plot_cosmos.per_point(j.v, "time_s"):
        j.key("points").refuse("no workload (bmi, ims, kcs) has OSP at each of its points (every bar is normalised to OSP)")
    summary = j.key("summary")
    for metric in cosmos_metrics(j.v):  # bitline's averages beside the paper's (plot_cosmos.average_panel)
        gains = summary.key(metric, optional=True)
        for pair in plot_cosmos.PAIRS if gains is not None else ():
            if gains.key(pair, optional=True) is not None:
                gains.key(pair).key("overall").positive()


def cosmos_metrics(j):
    """The rows of a `cosmos eval` chart: speedup, and energy efficiency where every point has its energy."""
    return ["speedup"] + (["energy_efficiency"] if all("energy_j" in p for p in j["points"]) else [])


def check_write_bw(j):
    scheme = j.key("multi_bit_program", optional=True)
    other = "one_shot" if scheme is None or scheme.text() == "page_by_page" else "page_by_page"
    modes = j.key("modes")
    drawn = [m for m in ("slc", "esp", "mlc", "tlc") if m in modes.obj()]
    if not drawn:
        modes.refuse("none of the modes slc, esp, mlc, tlc")
    for m in drawn:
        modes.key(m).key("gb_per_s").num()
        alt = modes.key(m).key(f"{other}_gb_per_s", optional=True)
        if alt is not None:
            alt.num()


def check_accel_eval(j):
    points = j.key("points").items(least=1, most=MAX_EVAL_POINTS)
    for p in points:
        for k in ("model", "context", "system"):
            p.key(k).text()
        p.key("slo_ms").positive()
        if p.key("feasible").flag():
            p.key("tokens_per_s_per_gpu").divisor()
            for k in ("batch", "bandwidth_bound_batch"):  # beside the paper's batches (plot_accel.llama_batches)
                if p.key(k, optional=True) is not None:
                    p.key(k).num(integer=True)
    summary = j.key("summary")
    summary.obj()
    base = plot_accel.baseline_of(j.v)
    At(base, f"summary.throughput_vs_{key_name(base)} (the baseline)").text()
    slos = {p.v["slo_ms"] for p in points}
    if len(slos) > MAX_EVAL_SLOS:
        j.key("points").refuse(f"{len(slos)} SLOs, more than {MAX_EVAL_SLOS} (a panel each)")
    systems, models = {p.v["system"] for p in points}, {p.v["model"] for p in points}
    if len(systems) * len(models) > MAX_EVAL_BARS:
        j.key("points").refuse(f"{len(systems)} systems x {len(models)} models, more than {MAX_EVAL_BARS} bars a panel")
    ratios = summary.key(f"throughput_vs_{base}", optional=True)
    for slo in slos if ratios is not None else ():
        entry = ratios.key(f"csix8@{slo:g}", optional=True)
        if entry is not None and entry.key("mean", optional=True, null=True) is not None:
            entry.key("mean").num()


def check_accel_ablation(j):
    parts = set()
    for _, v in j.key("variants").fields(least=1, most=MAX_VARIANTS):
        for part, ms in v.key("breakdown_ms").fields(most=MAX_PARTS):
            ms.num()
            parts.add(part)
        v.key("step_ms").num()
        if v.key("fits", optional=True) is not None:
            v.key("fits").flag()
    if len(parts) > MAX_PARTS:
        j.key("variants").refuse(f"{len(parts)} parts of the step, more than {MAX_PARTS}")
    if j.key("slo_ms", optional=True) is not None:
        j.key("slo_ms").positive()
    j.key("model").text()
    j.key("gpus").num(integer=True)
    j.key("batch_per_rank").num(integer=True)
    j.key("context").key("name").text()


def check_rates(systems, names):
    """Each of `names` in the object `systems`, with its hit_rate and recomputed_fraction in [0, 1]."""
    for s in names:
        for k in ("hit_rate", "recomputed_fraction"):
            systems.key(s).key(k).fraction()


def check_accel_sessions(j):
    systems = j.key("systems")
    names = [k for k, _ in systems.fields(least=1, most=MAX_SESSION_SYSTEMS)]
    loads = j.key("loads", optional=True, null=True)
    if loads is None or not loads.items():
        check_rates(systems, names)
        return
    loads = loads.items(most=MAX_LOADS)
    by_decoding = True
    for load in loads:
        load.key("name").text()
        o = load.key("offered")
        o.key("think_time_s").num()
        o.key("turns_min").num(integer=True)
        o.key("turns_max").num(integer=True)
        if o.key("think_time_distribution", optional=True) is not None:
            o.key("think_time_distribution").text()
        decoding = o.key("decoding", optional=True)
        by_decoding = (decoding.num() if decoding is not None else 0) > 0 and by_decoding
        check_rates(load.key("systems"), names)
    if not by_decoding:
        for load in loads:
            load.key("trace").key("sessions_alive").num()


def check_serve_sweep(j):
    points = j.key("points").items(least=1, most=MAX_RATES)
    # A sweep of open-loop rates (rate_per_s) or of closed-loop concurrency levels (concurrency): one or the other.
    load = "concurrency" if points[0].key("rate_per_s", optional=True) is None else "rate_per_s"
    for p in points:
        if load == "concurrency":
            p.key("concurrency").positive()
        else:
            p.key("rate_per_s").num()
        s = p.key("summary")
        s.key("output_tokens_per_s").num()
        for metric in ("ttft_ms", "tpot_ms"):
            for q in ("p50", "p90", "p99"):
                s.key(metric).key(q).num()
        cdf = p.key("cdf").key("ttft_ms").items()
        if cdf and len(cdf) != QUANTILES:
            p.key("cdf").key("ttft_ms").refuse("not the 101 quantiles (0, 1, ..., 100%) bitline writes")
        for q in cdf:
            q.num()
    slo = j.key("slo", optional=True, null=True)
    for k in ("ttft_ms", "tpot_ms") if slo is not None else ():
        if slo.key(k, optional=True, null=True) is not None:
            slo.key(k).positive()
    check_title(j, "model", "system", "scheduler")
    if j.key("workload", optional=True) is not None:
        check_title(j.key("workload"), "arrival", "input", "output")


def check_percentiles(m, optional=("mean", "p95")):
    """A latency summary of a serve result ({mean, p50, p90, p95, p99, count}): the percentiles drawn."""
    for q in ("p50", "p90", "p99") + optional:
        v = m.key(q, optional=q in optional)
        if v is not None:
            v.num()


def check_workload(j):
    wl = j.key("workload", optional=True)
    if wl is not None:
        check_title(wl, "arrival", "input", "output", "kind", "requests")
        for k in ("rate_per_s", "concurrency"):
            if wl.key(k, optional=True) is not None:
                wl.key(k).num()


def check_serve_run(j):
    s = j.key("summary")
    for metric in ("ttft_ms", "tpot_ms", "e2e_ms", "itl_ms", "queueing_ms"):
        m = s.key(metric, optional=metric in ("itl_ms", "queueing_ms"))
        if m is not None:
            check_percentiles(m)
    for k in ("input_tokens_per_s", "output_tokens_per_s", "requests_per_s", "duration_s"):
        s.key(k).num()
    for k in ("goodput_requests_per_s", "requests", "preemptions"):
        if s.key(k, optional=True) is not None:
            s.key(k).num(integer=k != "goodput_requests_per_s")
    if s.key("slo_attainment", optional=True) is not None:
        s.key("slo_attainment").fraction()
    slo = s.key("slo", optional=True, null=True)
    for k in ("ttft_ms", "tpot_ms") if slo is not None else ():
        if slo.key(k, optional=True, null=True) is not None:
            slo.key(k).positive()
    instances = s.key("instances", optional=True, null=True)
    for i in instances.items(most=MAX_INSTANCES) if instances is not None else ():
        i.key("role").text()
        i.key("gpus").num(integer=True)
        i.key("busy_s").num()
    kv = s.key("kv_transfer", optional=True, null=True)
    if kv is not None:
        kv.key("transfers").num(integer=True)
        kv.key("mean_ms").num()
    check_title(j, "model", "system", "scheduler")
    check_workload(j)
    dis = j.key("disaggregation", optional=True, null=True)
    for side in ("prefill", "decode") if dis is not None else ():
        check_title(dis.key(side), "system", "instances")


def check_serve_capacity(j):
    for p in j.key("probes").items(least=1, most=MAX_PROBES):
        p.key("rate_per_s").positive()
        for k in ("p90_ttft_ms", "p99_tpot_ms", "output_tokens_per_s"):
            p.key(k).num()
        p.key("meets").flag()
    j.key("capacity_requests_per_s").num()
    if j.key("first_miss_requests_per_s", null=True) is not None:
        j.key("first_miss_requests_per_s").num()
    slo = j.key("slo")
    for k in ("p90_ttft_ms", "p99_tpot_ms"):
        slo.key(k).positive()
    check_title(j, "model", "system", "scheduler")
    check_workload(j)


def check_serve_capacity_experiment(j):
    points = j.key("points").items(least=1, most=MAX_EVAL_BARS)
    for p in points:
        p.key("model").text()
        p.key("system").text()
        p.key("capacity_requests_per_s").num()
        if p.key("infeasible", optional=True) is not None and not isinstance(p.v["infeasible"], str):
            p.key("infeasible").refuse("not a string")  # the reason, never drawn: any length
    systems, models = {p.v["system"] for p in points}, {p.v["model"] for p in points}
    if len(systems) * len(models) > MAX_EVAL_BARS:
        j.key("points").refuse(f"{len(systems)} systems x {len(models)} models, more than {MAX_EVAL_BARS} bars")
    e = j.key("experiment")
    e.obj()
    check_title(e, "experiment", "input", "output", "disaggregate", "prefill_system")
    for k in ("slo_p90_ttft_ms", "slo_p99_tpot_ms"):
        if e.key(k, optional=True) is not None:
            e.key(k).positive()


def check_sweep(j, points, value):
    """The points of an `accel sweep` or `hbf area --vary` drawn by sweep_lines, `value(At)` checking the y."""
    vary = j.key("vary", optional=True, null=True)
    keys = [k for k, _ in vary.fields(most=MAX_SWEEP_KEYS)] if vary is not None else []
    if not keys:
        keys = [k for k, _ in points[0].key("values").fields(least=1, most=MAX_SWEEP_KEYS)]
    lines = set()
    for p in points:
        values = p.key("values")
        lines.add(tuple(values.key(k).scalar() for k in keys[1:]))
        values.key(keys[0]).scalar()
        value(p)
    if len(lines) > MAX_SWEEP_LINES:
        j.key("points").refuse(f"{len(lines):,} lines (one per combination of {', '.join(keys[1:])[:60]}), more than "
                               f"{MAX_SWEEP_LINES}: a legend past that cannot be read; sweep fewer values")


def check_accel_sweep(j):
    points = j.key("points").items(least=1, most=MAX_SWEEP_POINTS)
    feasible = [p for p in points if p.key("feasible").flag()]
    if not feasible:
        j.key("points").refuse("no feasible point to draw (every point's reason is in the JSON)")
    check_sweep(j, feasible, lambda p: p.key("tokens_per_s_per_gpu").num())
    check_title(j, "model", "system")
    ctx = j.key("context", optional=True)
    if ctx is not None and isinstance(ctx.v, dict):
        check_title(ctx, "name")
    elif ctx is not None:
        ctx.scalar()
    if j.key("slo_ms", optional=True) is not None:
        j.key("slo_ms").positive()


def draw_accel_sweep(j, out):
    pts = [p for p in j["points"] if p.get("feasible")]
    fig, ax = plt.subplots(figsize=(9, 4.2))
    sweep_lines(ax, pts, j.get("vary"), lambda p: p["tokens_per_s_per_gpu"], "decode tokens/s per GPU")
    ctx = j.get("context", "")
    ctx = ctx.get("name", "") if isinstance(ctx, dict) else ctx
    ax.set_title(f"{j.get('model', '')} on {j.get('system', '')}, context {ctx}, SLO {j.get('slo_ms', 0):g} ms", fontsize=9)
    save(fig, out)


def check_hbf_area(j):
    def stack(p):
        s = p.key("area").key("hbf_stack")
        s.key("footprint_mm2").num()
        s.key("density_gib_per_mm2").num()
        if s.key("capacity_bytes", optional=True) is not None:  # the paper's density (hbf_paper_marks)
            s.key("capacity_bytes").num()
    check_sweep(j, j.key("points").items(least=1, most=MAX_SWEEP_POINTS), stack)


def hbf_paper_marks(j, xs):
    """The paper's HBF stack (scripts/paper_figures.json hbf_area: its footprint at its layer count; the density, the
    swept stack's capacity over that footprint) where the sweep's x is hbf.area.layers and `xs`, sweep_lines' values
    on it, hold the paper's count: (its x position, footprint mm^2, density GiB/mm^2 or None without the capacity);
    else None."""
    first = next(iter(j.get("vary") or j["points"][0]["values"]))
    paper = [i for i, x in enumerate(xs) if str(x) == str(PAPER_HBF["layers"])]
    if first != "hbf.area.layers" or not paper:
        return None
    at = next(p for p in j["points"] if p["values"][first] == xs[paper[0]])
    capacity = at["area"]["hbf_stack"].get("capacity_bytes")
    mm2 = PAPER_HBF["hbf_stack_mm2"]
    return paper[0], mm2, capacity / 2**30 / mm2 if capacity is not None else None


def draw_hbf_area(j, out):
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    xs = sweep_lines(axes[0], j["points"], j.get("vary"), lambda p: p["area"]["hbf_stack"]["footprint_mm2"], "HBF stack footprint (mm^2)")
    sweep_lines(axes[1], j["points"], j.get("vary"), lambda p: p["area"]["hbf_stack"]["density_gib_per_mm2"], "density (GiB/mm^2)")
    marks = hbf_paper_marks(j, xs)
    for ax, y in zip(axes, marks[1:] if marks else ()):
        if y is not None:
            ax.plot([marks[0]], [y], "*", color="k", ms=12,
                    label=f"HBF stack, paper (FlashAccel: {PAPER_HBF['hbf_stack_mm2']:g} mm^2, {PAPER_HBF['layers']} layers)")
            sweep_legend(ax)
    save(fig, out)


SSB_SYSTEMS = ("osp", "isp", "parabit", "roaring", "row")


def check_cosmos_ssb(j):
    queries = j.key("queries").items(least=1, most=MAX_QUERIES)
    for q in queries:
        q.key("name").text()
        systems = q.key("systems")
        systems.key("fc").key("time_s").divisor()
        for s in SSB_SYSTEMS:
            if s in systems.obj():
                systems.key(s).key("time_s").divisor()
    if not any(all(s in q.v["systems"] for q in queries) for s in SSB_SYSTEMS):
        j.key("queries").refuse("no system beside fc ran every query: nothing to compare")


def draw_cosmos_ssb(j, out):
    qs = j["queries"]
    systems = [s for s in SSB_SYSTEMS if all(s in q["systems"] for q in qs)]
    fig, ax = plt.subplots(figsize=(11, 4.2))
    width = 0.8 / len(systems)
    for i, s in enumerate(systems):
        ax.bar([x + i * width for x in range(len(qs))],
               [q["systems"][s]["time_s"] / q["systems"]["fc"]["time_s"] for q in qs], width, label=f"FC vs {s}")
    ax.axhline(1.0, color="k", lw=1)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(qs))], [q["name"] for q in qs])
    ax.set_yscale("log")
    ax.set_ylabel("FC's speedup (x)")
    ax.legend(fontsize=8, ncol=len(systems), loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False)  # over no bar
    ax.grid(axis="y", alpha=0.3)
    save(fig, out)


# kind -> (check: At -> None, or Refused; draw: (the JSON, the .png to write) -> None)
KINDS = {
    "cosmos-eval": (check_cosmos_eval, lambda j, out: plot_cosmos.bars(j, cosmos_metrics(j), out)),
    "write-bw": (check_write_bw, plot_cosmos.write_bw),
    "accel-eval": (check_accel_eval, plot_accel.throughput),
    "accel-ablation": (check_accel_ablation, plot_accel.ablation),
    "accel-sessions": (check_accel_sessions, plot_accel.hit_rate),
    "accel-sweep": (check_accel_sweep, draw_accel_sweep),
    "serve-sweep": (check_serve_sweep, plot_serve.sweep),
    "serve-run": (check_serve_run, plot_serve.run),
    "serve-capacity": (check_serve_capacity, plot_serve.capacity),
    "serve-capacity-experiment": (check_serve_capacity_experiment, plot_serve.capacity_experiment),
    "hbf-area": (check_hbf_area, draw_hbf_area),
    "cosmos-ssb": (check_cosmos_ssb, draw_cosmos_ssb),
}


def sweep_lines(ax, points, vary, value, ylabel):
    """One line per value of the second swept key (or one line), x = the first key's values in order (returned)."""
    keys = list(vary) if vary else list(points[0]["values"])
    first = keys[0]
    at = {}  # (x, the other keys' values) -> the first point there
    for p in points:
        at.setdefault((p["values"][first], tuple((k, p["values"][k]) for k in keys[1:])), p)
    xs = list(dict.fromkeys(x for x, _ in at))
    groups = list(dict.fromkeys(g for _, g in at))
    for g in groups:
        ys = [value(at[(x, g)]) if (x, g) in at else float("nan") for x in xs]
        ax.plot(range(len(xs)), ys, "o-", label=", ".join(f"{k}={v}" for k, v in g) or None)
    # Every n-th value labelled past MAX_TICK_LABELS (thousands of labels take a minute to lay out and cannot be read);
    # labels that would not fit side by side (about 8 characters a tick at 60 ticks a panel) are turned on end.
    step = math.ceil(len(xs) / MAX_TICK_LABELS)
    shown = [str(x) for x in xs[::step]]
    ax.set_xticks(range(0, len(xs), step), shown)
    if sum(len(x) + 2 for x in shown) > 60:
        ax.tick_params(axis="x", labelrotation=90 if len(shown) > 20 else 45, labelsize=7 if len(shown) > 20 else 8)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("center" if len(shown) > 20 else "right")
    ax.set_xlabel(first)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if groups and groups[0]:
        sweep_legend(ax)
    return xs


def sweep_legend(ax):
    """Beside the panel, never over a line (up to 64 entries, in columns of 22)."""
    n = len(ax.get_legend_handles_labels()[1])
    ax.legend(fontsize=7 if n > 8 else 8, loc="upper left", bbox_to_anchor=(1.01, 1), ncol=math.ceil(n / 22))


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    if len(sys.argv) not in (2, 3):
        fail("usage: plot.py RESULT.json [OUT.png]  (plot.py --help: what it draws and what it refuses)")
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.splitext(src)[0] + ".png"
    try:
        j = read_json(src)
        kind = kind_of(j)
        if kind is None:
            keys = ", ".join(key_name(k) for k in sorted(j)[:12]) if isinstance(j, dict) else type(j).__name__
            raise Refused(f"not a bitline result this script can draw (its top-level keys: {keys}); "
                          f"it draws the JSON of {KINDS_DRAWN}")
        check, draw = KINDS[kind]
        check(At(j))
        real = output_path(out, src)
    except Refused as e:
        fail(f"{src}: {e}")
    try:
        write_atomically(draw, j, real)
    except OSError as e:
        fail(f"{src}: cannot write {out} ({e.strerror or e})")
    except Exception as e:  # a last line of defence: the checks above are meant to catch every input drawing fails on
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        fail(f"{src}: cannot draw it ({type(e).__name__}: {first[:120]})")
    print(f"plot.py: {kind} -> {out}")


if __name__ == "__main__":
    main()
