#!/usr/bin/env python3
"""The model's figures that the prose of README.md and docs/*.md repeats, kept equal to the generated tables.

A figure the prose repeats from a generated table is marked where it stands: `<!--v:NAME-->2.57x<!--/v-->` (HTML
comments: the rendered page shows 2.57x). NAME is registered once, in VALUES below, with where the figure is read: a
table or line of a GENERATED block (written by `make validate`, `make ssd-drives`, `make ssb` or `make
serve-capacity`) or of a section of docs/validation.md (written whole by `make validate`), and how. A list of CSV
columns the docs give is marked the same way and registered with the command that writes that CSV. A figure of an
example run that no table holds (`accel run ... --static-batch` drops the prefill from 5.15 to 4.76 s) is registered
with the command, Run(ARGS...), and read from what `bitline ARGS` prints (or from the JSON it writes to {json});
one comparing runs with Runs(Run, Run). Those commands are cheap (under a second or two each; ~10 s in all).

  doc_values.py check [BITLINE]   exit 1 if a marked figure differs from its source, a mark names no registered NAME,
                                  a registered NAME is marked nowhere, or a mark is malformed. With BITLINE, the
                                  marked column lists are also compared with the CSV headers the program writes,
                                  and the figures of example runs with what their commands print.
  doc_values.py write [BITLINE]   rewrite every marked figure from its source, with BITLINE those of example runs
                                  too (the make targets above run it last)

Run by `make doc-commands` (scripts/check_doc_commands.py, with the program, then tests/scripts/test_doc_values.py
with $BITLINE set) and by ctest (Scripts.DocValues: tests/scripts/test_doc_values.py without the program, so the
figures of example runs are left to make doc-commands). Standard library only.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A mark right after a backquote is an example of the syntax in inline code, not a mark.
MARK = re.compile(r"(?<!`)<!--v:([^>]*?)-->(.*?)<!--/v-->", re.S)
# Files written whole by a make target: a source there is a section ("## heading"), not a GENERATED block.
WHOLE = {"docs/validation.md"}


# ---------------------------------------------------------------- how a figure is read from its source text


def cells(line):
    """The cells of a Markdown table row (a `\\|` inside a cell is no separator)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def tables(text):
    """(header cells, rows of cells) of every table in text."""
    out, cur = [], None
    for line in text.split("\n"):
        if line.startswith("|"):
            if cur is None:
                cur = (cells(line), [])
                out.append(cur)
            elif not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
                cur[1].append(cells(line))
        else:
            cur = None
    return out


def cell(row, column, pick=None, fmt=None):
    """The cell in `column` (its header) of the one row whose first cells are `row` (a string or a tuple); `pick`, a
    regular expression, takes its first group (or whole match) from the cell, `fmt` turns the text into the figure."""
    key = (row,) if isinstance(row, str) else tuple(row)

    def get(text):
        found = [r[h.index(column)] for h, rows in tables(text) if column in h
                 for r in rows if tuple(r[:len(key)]) == key and len(r) == len(h)]
        if len(found) != 1:
            raise LookupError(f"{len(found)} cells in column '{column}' of a row {' | '.join(key)}")
        return _pick(found[0], pick, fmt)
    return get


def match(pattern, fmt=None):
    """Group 1 of the one match of `pattern` in the source text (it must match once)."""
    def get(text):
        found = re.findall(pattern, text)
        if len(found) != 1:
            raise LookupError(f"{len(found)} matches of /{pattern}/")
        return fmt(found[0]) if fmt else found[0]
    return get


def _pick(text, pick, fmt):
    if pick:
        m = re.search(pick, text)
        if not m:
            raise LookupError(f"/{pick}/ not in '{text}'")
        text = m.group(1) if m.groups() else m.group(0)
    return fmt(text) if fmt else text


def rows(text):
    """Every row of every table in text, as {header: cell}."""
    return [dict(zip(h, r)) for h, rs in tables(text) for r in rs if len(r) == len(h)]


def number(text):
    """The first number in a cell ('+10.3% **>15%**' -> 10.3, '1,055,528' -> 1055528), or None."""
    m = re.search(r"[-+]?\d[\d,]*(\.\d+)?", text)
    return float(m.group(0).replace(",", "")) if m else None


def count(test, rows_of=None):
    """The number of rows (of every table in the source, or of those `rows_of` keeps) for which test(row dict) holds."""
    def get(text):
        return str(sum(1 for r in rows(text) if (rows_of is None or rows_of(r)) and test(r)))
    return get


def over(column, where, reduce):
    """reduce(the numbers in `column` of the rows that where(row dict) keeps): a figure about several rows, e.g.
    over("deviation", lambda r: r["GPU"] == "A100", span("{:+.0f} to {:+.0f}%"))."""
    def get(text):
        xs = [number(r[column]) for r in rows(text) if column in r and where(r) and number(r[column]) is not None]
        if not xs:
            raise LookupError(f"no row with a number in column '{column}'")
        return reduce(xs)
    return get


def span(fmt, absolute=False):
    """The smallest and largest of the numbers (of their magnitudes), through fmt."""
    def get(xs):
        xs = [abs(x) for x in xs] if absolute else xs
        return fmt.format(min(xs), max(xs))
    return get


def largest(fmt):
    return lambda xs: fmt.format(max(abs(x) for x in xs))


class Columns:
    """A CSV's columns as the docs list them (backquoted names in order; `name.*` stands for one or more columns
    `name.x`), checked against the header of the CSV that `bitline ARGS` writes to {csv}."""

    def __init__(self, *args):
        self.args = args

    def header(self, binary):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.csv")
            subprocess.run([binary, *(a.replace("{csv}", path) for a in self.args)], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
            with open(path, encoding="utf-8") as f:
                return f.readline().strip().split(",")

    @staticmethod
    def differ(documented, header):
        """Where the documented list and the header part, or None when they agree."""
        names = re.findall(r"`([^`]+)`", documented)
        i = 0
        for n in names:
            if n.endswith(".*"):
                j = i
                while j < len(header) and header[j].startswith(n[:-1]):
                    j += 1
                if j == i:
                    return f"`{n}` matches no column at {header[i] if i < len(header) else 'the end'}"
                i = j
            elif i < len(header) and header[i] == n:
                i += 1
            else:
                return f"`{n}` documented where the CSV has {header[i] if i < len(header) else 'no more columns'}"
        return None if i == len(header) else f"undocumented columns: {', '.join(header[i:])}"


class Run:
    """The source of the figures of an example run the prose gives, which no generated table holds: what `bitline
    ARGS` prints on standard output, or, where an argument holds {json}, the JSON it writes there. Each command runs
    once per check (the marks reading it share its output); keep it to a few seconds."""

    def __init__(self, *args):
        self.args = args

    def __eq__(self, other):
        return isinstance(other, Run) and self.args == other.args

    def __hash__(self):
        return hash(self.args)

    def __str__(self):
        return "`bitline " + " ".join(self.args) + "`"

    def output(self, binary):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.json")
            try:
                env = dict(os.environ)
                env.setdefault("BITLINE_CONFIG_DIR", os.path.join(ROOT, "configs"))
                p = subprocess.run([binary, *(a.replace("{json}", path) for a in self.args)], cwd=ROOT, text=True,
                                   capture_output=True, timeout=300, env=env)
            except subprocess.TimeoutExpired:
                raise LookupError("it ran past 300 s")
            if p.returncode != 0:
                raise LookupError(f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
            if any("{json}" in a for a in self.args):
                with open(path, encoding="utf-8") as f:
                    return f.read()
            return p.stdout


class Runs:
    """Several example runs whose outputs one figure compares (`how` gets the list of their texts): the 990 PRO's
    sequential write with 4 KiB units against page level."""

    def __init__(self, *runs):
        self.runs = runs

    def __eq__(self, other):
        return isinstance(other, Runs) and self.runs == other.runs

    def __hash__(self):
        return hash(self.runs)

    def __str__(self):
        return " against ".join(str(r) for r in self.runs)


def change(read, fmt="{:+.0%}", absolute=False):
    """The relative change from the first run's figure to the second's, each read by `read` (a Runs source); its
    magnitude with `absolute` (prose that says "lower by")."""
    def get(texts):
        x = number(read(texts[1])) / number(read(texts[0])) - 1
        return fmt.format(abs(x) if absolute else x)
    return get


def json_at(path, fmt=None):
    """The value at a dotted path of the JSON a Run wrote (`summary.ttft_ms.mean`; a list's item by its index)."""
    def get(text):
        value = json.loads(text)
        for key in path.split("."):
            try:
                value = value[int(key)] if isinstance(value, list) else value[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise LookupError(f"no '{key}' of '{path}' in the JSON")
        return fmt(value) if fmt else str(value)
    return get


# ---------------------------------------------------------------- the registry: NAME -> (source, how)

HEADLINE = ("README.md", "headline")
REAL = ("docs/calibration.md", "real-gpus")
OTHER = ("docs/calibration.md", "real-gpus-other")
RELEASES = ("docs/calibration.md", "real-gpus-releases")
H200 = ("docs/calibration.md", "real-gpus-h200")
BATCH = ("docs/calibration.md", "real-gpus-batch")
GEMM = ("docs/calibration.md", "gemm-kernels")
B200 = ("docs/calibration.md", "gemm-kernels-b200")
ATTN = ("docs/calibration.md", "attention-kernels")
COLL = ("docs/calibration.md", "collective-kernels")
ACCEL = ("docs/llm.md", "accel-results")
SESSIONS = ("docs/llm.md", "accel-sessions")
LLAMA = ("docs/llm.md", "llama-point")
DESIGN = ("docs/llm.md", "design-space")
WRITES = ("docs/llm.md", "accel-writes")
COLLECTIVES = ("docs/llm.md", "accel-collectives")
LATENCY = ("docs/llm.md", "accel-run-latency")
SENSITIVITY = ("docs/calibration.md", "calibration-sensitivity")
COSMOS = ("docs/validation.md", "## Flash-Cosmos (MICRO 2022)")
DRIVES = ("docs/ssd.md", "drives")
ENGINES = ("docs/serving.md", "serve-engines")
CAPACITY = ("docs/serving.md", "serve-capacity")
SSB = ("docs/cosmos.md", "ssb-table")
HBF_AREA = ("docs/hbf.md", "hbf-area")
HBF_LAYERS = ("docs/hbf.md", "hbf-area-layers")
COLOCATED = ("docs/serving.md", "serve-capacity-colocated")


def first_token(gpu, tokens):
    return lambda r: r["GPU"] == gpu and r["in/out"] == f"{tokens}/1"


def drive(name, workload, column, measured="", fmt=None):
    """A cell of the drives table: the rows of drive `name` (its first word after Samsung) and `workload` (the
    workload's name before any note) whose measured cell starts with `measured`; they must agree."""
    def get(text):
        cells = {r[column] for r in rows(text) if r["drive"].split()[1] == name and r["workload"].split(" (")[0] == workload
                 and r["measured"].startswith(measured)}
        if len(cells) != 1:
            raise LookupError(f"{len(cells)} different cells of {name} {workload} ({measured}) in '{column}'")
        text = cells.pop()
        return fmt(text) if fmt else text
    return get


def pct(s):
    return re.match(r"[+-]?\d+%", s).group(0)


def kilo(s):
    return f"{number(s) / 1e3:,.0f} K"


def kilo1(s):
    return f"{number(s) / 1e3:,.1f} K"


def mega(s):
    return f"{number(s) / 1e6:.2f} M"


def within_15(r):
    return r["deviation"] != "-" and "**>15%**" not in r["deviation"]


def lowest_highest(row, fmt, each=lambda s: s):
    """A table row's `lowest` and `highest` cells, through fmt."""
    def get(text):
        return fmt.format(each(cell(row, "lowest")(text)), each(cell(row, "highest")(text)))
    return get


def engine_rows(text, engine, metric):
    """serve-engines' rows of one engine and metric (their names start so): [(setting, published, bitline)]."""
    return [(r["setting"], number(r["published"]), number(r["bitline"])) for r in rows(text)
            if r["engine"] == engine and r["metric"].startswith(metric)]


def engine_ratio(engines, num, den, column, fmt):
    """The range over the engines' settings of metric num / metric den, published or bitline's, through fmt."""
    def get(text):
        i = {"published": 1, "bitline": 2}[column]
        xs = []
        for e in engines:
            d = {s[0]: s[i] for s in engine_rows(text, e, den)}
            xs += [s[i] / d[s[0]] for s in engine_rows(text, e, num)]
        return fmt.format(min(xs), max(xs))
    return get


def engine_gap(engine, metric, fmt):
    """The range over the settings of published - bitline of one metric."""
    def get(text):
        xs = [p - b for _, p, b in engine_rows(text, engine, metric)]
        return fmt.format(min(xs), max(xs))
    return get


def capacity_ratio(system, models, fmt):
    """The range over `models` of `system`'s capacity over 8 x H200's (a serve-capacity table), through fmt."""
    def get(text):
        cap = {(r["model"], r["system"]): number(r["capacity (requests/s)"]) for r in rows(text)}
        xs = [cap[(m, system)] / cap[(m, "h200x8")] for m in models]
        return fmt.format(min(xs), max(xs))
    return get


def ssb(column, fmt, part=0, of=None, queries=None):
    """The range over the SSB queries (not the geomean row; only `queries` if given) of a column's numbers (`part`:
    which of "a / b / c"), or of of(row dict) when given; fmt takes (lowest, highest)."""
    def get(text):
        qs = [r for r in rows(text) if r["query"].startswith("Q") and (queries is None or r["query"] in queries)]
        xs = [of(r) if of else number(r[column].split("/")[part]) for r in qs]
        return fmt.format(min(xs), max(xs))
    return get


def croaring_over_fc(r):
    return number(r["CRoaring ms*"]) / number(r["FC ms"])


def mean_of(s):
    return s.split(" / ")[0]


def field(*first, at, fmt=None, after=None):
    """Word `at` (an index; -1 the last) of the printed line whose first words are `first`: the one such line, or
    with `after` (a regular expression) the first such line after its first match (e.g. a table's title)."""
    def get(text):
        if after:
            m = re.search(after, text)
            if not m:
                raise LookupError(f"/{after}/ not in the output")
            text = text[m.end():]
        found = [line.split() for line in text.split("\n") if line.split()[:len(first)] == list(first)]
        if not found or (len(found) > 1 and not after):
            raise LookupError(f"{len(found)} lines starting '{' '.join(first)}'")
        try:
            word = found[0][at]
        except IndexError:
            raise LookupError(f"no word {at} on the line starting '{' '.join(first)}'")
        return fmt(word) if fmt else word
    return get


def fixed(digits, scale=1.0):
    """A number through a scale, printed with `digits` decimals (ms -> s: fixed(2, 1e-3))."""
    return lambda s: f"{number(s) * scale:,.{digits}f}"


def ratio(num, den, fmt):
    """num(text) / den(text), two figures read from the same source, through fmt."""
    return lambda text: fmt.format(number(num(text)) / number(den(text)))


def thousands(s):
    return f"{number(s):,.0f}"


def oth(gpus, models, metric, inout=None, but=None):
    """A where() over the rows of real-gpus-other: GPUs, models, metric (its first word: `output` or `first-token`),
    prompt/output, and a row to leave out (a (GPU, model, in/out, batch) tuple)."""
    def where(r):
        return (r["GPU"] in gpus and r["model"] in models and r["metric"].startswith(metric) and
                (inout is None or r["in/out"] == inout) and
                (but is None or (r["GPU"], r["model"], r["in/out"], r["batch"]) != but))
    return where


def serve_llama2(system, *sets):
    """docs/llm.md's serving-engine example: `serve run` of Llama-2-7B at 4 requests/s under --engine ideal."""
    return Run("serve", "run", "--model", "llama2-7b", "--system", system, "--rate", "4", "--input", "300", "--output",
               "50", "--requests", "200", "--engine", "ideal", *[a for kv in sets for a in ("--set", kv)])


def full_left(text):
    """HBM left for KV in `accel run`'s memory line: the HBM less the weights, the reserve and the workspace (GB)."""
    total = number(match(r"HBM used [\d.]+ of ([\d.]+) GB")(text))
    return total - sum(number(match(p + r" ([\d.]+) GB")(text)) for p in ("weights", "runtime reserve", "workspace"))



def engine_lone(engine):
    """docs/serving.md's lone request of 1,000 + 200 tokens of Llama-3.1-8B on one H100 under an engine profile."""
    return Run("serve", "run", "--model", "llama3.1-8b", "--system", "h100x1", "--concurrency", "1", "--input", "1000",
               "--output", "200", "--requests", "5", "--engine", engine)


def disaggregation(*more):
    """docs/serving.md's disaggregation example: Llama-3.1-70B on 4 x H100 per instance at 3 requests/s."""
    return Run("serve", "run", "--model", "llama3.1-70b", "--system", "h100x4", "--rate", "3", "--input",
               "lognormal:2000:0.5", "--output", "300", "--requests", "500", *more)


def swap_example(*more):
    """docs/serving.md's preemption example: Llama-2-7B on one H100, 200 users of 1,500 + 1,000 tokens."""
    return Run("serve", "run", "--model", "llama2-7b", "--system", "h100x1", "--concurrency", "200", "--input", "1500",
               "--output", "1000", "--requests", "400", "--engine", "ideal", "--json", "{json}", *more)



def fio(drive, workload, *sets):
    """`ssd fio` of a shipped drive job (configs/ssd/drives/fio/WORKLOAD.fio at the occupancy its header names) on
    samsung-DRIVE-1tb.xml, with `--set` overrides (docs/ssd.md)."""
    job = f"configs/ssd/drives/fio/{workload}.fio"
    with open(os.path.join(ROOT, job), encoding="utf-8") as f:
        occupancy = re.search(r"--occupancy (\d+)", f.read()).group(1)
    return Run("ssd", "fio", job, "--device", f"configs/ssd/drives/samsung-{drive}-1tb.xml", "--occupancy", occupancy,
               *[a for kv in sets for a in ("--set", kv)])


def mqsim_inputs(device, workload, *sets):
    """`ssd run` of the shipped MQSim-shaped inputs of configs/ssd/ (docs/ssd.md, "Side by side with MQSim")."""
    return Run("ssd", "run", "--device", f"configs/ssd/{device}", "--workload", f"configs/ssd/{workload}", "--json",
               "{json}", *[a for kv in sets for a in ("--set", kv)])


MBPS = match(r"\(([\d.]+)MB/s\)")
CLAT = match(r"clat \(usec\): .*?avg=([\d.]+)", fixed(0))
PAGE_LEVEL = ("ssd_device.mapping_unit=0", "ssd_device.cache_program=false")
ONE_PLANE = "ssd_device.independent_plane_reads=false"
NO_GATING = "ssd_model.issue_on_idle_channel=false"


def kilo_of(s):
    return f"{number(s) / 1e3:.0f} K"


def against(rated, fmt="{:+.0%}"):
    """A figure's deviation from a published one (the text gives the published figure beside it)."""
    return lambda s: fmt.format(number(s) / rated - 1)


def share_of(bound, fmt="{:.0%}"):
    """A figure as a share of a bound the text derives by hand."""
    return lambda s: fmt.format(number(s) / bound)


def scenario(key, fmt=thousands):
    return json_at("scenarios.0." + key, lambda v: fmt(str(v)))


def flow(i, key, fmt=thousands):
    return json_at(f"scenarios.0.flows.{i}.{key}", lambda v: fmt(str(v)))


def mqsim_dev(mqsim, fmt="{:+.1%}"):
    """bitline's figure against MQSim's (the table's MQSim column)."""
    return lambda s: fmt.format(number(s) / mqsim - 1).replace("+0.0%", "+0.0%")



def units_per_page(text):
    """Host 4 KiB units per flash page programmed (into SLC) in an `ssd fio` JSON."""
    run = json.loads(text)["bitline"]["runs"][0]
    return f"{run['ftl']['host_page_writes'] / (run['slc']['slc_programs'] + run['slc']['direct_programs']):.2f}"


def weighted_latency(fmt):
    """The mean device response over a scenario's flows, weighted by their requests (us)."""
    def get(text):
        flows = json.loads(text)["scenarios"][0]["flows"]
        return fmt(sum(f["device_response_time"]["mean_us"] * f["requests"] for f in flows) / sum(f["requests"] for f in flows))
    return get


GC_FIGURES = {
    "iops": scenario("iops", fixed(0)), "requests": scenario("requests"), "gc": scenario("ftl.gc_executions"),
    "pages": ratio(json_at("scenarios.0.ftl.gc_page_writes"), json_at("scenarios.0.ftl.gc_executions"), "{:.1f}"),
    "wa": scenario("ftl.write_amplification", fixed(2)), "lat": flow(0, "device_response_time.mean_us", fixed(0))}
MQ_WRITE = mqsim_inputs("device.xml", "write.xml")
MQ_READ = mqsim_inputs("device.xml", "read.xml")

PREFIX = Run("serve", "run", "--model", "llama3.1-70b", "--system", "h100x4", "--trace",
             "configs/traces/mooncake-example.jsonl", "--engine", "ideal")
SSB1_INDEX = Run("cosmos", "ssb", "--sf", "1", "--timing-only", "--json", "{json}")
SSB100 = Run("cosmos", "ssb", "--sf", "100", "--timing-only")
SSB100_INDEX = Run("cosmos", "ssb", "--sf", "100", "--timing-only", "--json", "{json}")
SSB_RELIABILITY = Run("cosmos", "ssb", "--sf", "0.1", "--reliability", "--json", "{json}")
GENERAL_DEVICE_SLOWER = Runs(*(Run("cosmos", "run", "--workload", w, "--system", sys_, "--general-device")
                               for w, sys_ in (("bmi", "isp"), ("ims", "isp"), ("kcs", "isp"), ("bmi", "parabit"),
                                               ("kcs", "parabit"))))


def ssb100_column(system):
    """The smallest and largest of a system's ms per query in `cosmos ssb --sf 100 --timing-only`'s table."""
    def get(text):
        head = [w for w in next(line.split() for line in text.split("\n") if line.startswith("query")) if w != "ms"]
        col = head.index(system)
        xs = [float(line.split()[col]) for line in text.split("\n") if re.match(r"Q\d\.\d ", line)]
        return f"{min(xs):.0f}-{max(xs):.0f}"
    return get


HBF_AREA_CSI = Run("hbf", "area", "--preset", "csi")


def hbf_stream(tensor="12MiB", layout="execution", prefetch=True, json_out=False):
    """docs/hbf.md's measured streams: `hbf stream --preset csi --bytes 100GiB` of one tensor size and layout."""
    return Run("hbf", "stream", "--preset", "csi", "--bytes", "100GiB", "--tensor", tensor, "--layout", layout,
               *(() if prefetch else ("--no-prefetch",)), *(("--json", "{json}") if json_out else ()))


def area_sweep(key, *sets):
    """`hbf area --preset csi --vary KEY` (with `--set` overrides): its printed table."""
    return Run("hbf", "area", "--preset", "csi", *[a for kv in sets for a in ("--set", kv)], "--vary", key)


def area_row(value, column):
    """A column of the row of one value in `hbf area --vary`'s table (value, GiB/stk, sense, array, circuit, base,
    footprint, limited by (two words), GiB/mm2, area, dens)."""
    at = {"array": 3, "circuit": 4, "base": 5, "footprint": 6, "GiB/mm2": -3, "area": -2, "dens": -1}[column]

    def get(text):
        rows = [line.split() for line in text.split("\n")[1:] if line.split()[:1] == [value]]
        if len(rows) != 1:
            raise LookupError(f"{len(rows)} rows of {value}")
        return rows[0][at]
    return get


DECODE_ATTN = Run("accel", "attention", "--system", "h100", "--precision", "fp16", "--decode", "64x64x8x32x128",
                  "--decode", "64x64x8x512x128")
B200_CALL = Run("accel", "attention", "--system", "b200", "--prefill", "128x32x128x128", "--prefill", "8x32x2048x128",
                "--prefill", "1x32x16384x128")


def attn_row(first, column, fmt=None):
    """A column (its index from the end: -1 the last) of the row of `accel attention` whose first words are `first`."""
    return field(*first.split(), at=column, fmt=fmt)


def with_gaps(s):
    return str(number(s) + 2 * 1.3)


SERVE_BENCH = Run("serve", "run", "--model", "llama3.1-70b", "--system", "h100x8", "--engine", "vllm", "--rate", "12",
                  "--input", "lognormal:1024:0.6", "--output", "lognormal:256:0.6", "--requests", "100000", "--json",
                  "{json}")
CODER_H200 = Run("accel", "run", "--model", "qwen3-coder-480b", "--system", "h200x8", "--context", "long", "--slo", "100")
GEMM_H100 = Run("accel", "gemm", "--system", "h100", "--precision", "fp8", "--set", "llm.compute.fp8_util_max=0", "--gemm",
                "4096x1536x24576", "--gemm", "4096x512x32768")
SPAN_ALL_LLAMA = Run("accel", "run", "--model", "llama3.1-405b", "--system", "csix8", "--context", "long", "--slo",
                     "100000", "--set", "hbf.runtime.kv_span=all")
FULL_H200 = Run("accel", "run", "--model", "llama3.1-405b", "--system", "h200x8", "--context", "agent", "--slo", "100000",
                "--set", "serving.capacity_context=full")
ABLATION_FULL = Run("accel", "run", "--model", "qwen3-235b", "--system", "csi", "--gpus", "8", "--context", "8110:2530",
                    "--slo", "100", "--batch", "256")
BOARD_H200 = Run("accel", "run", "--model", "qwen3-235b", "--system", "h200x8", "--context", "long", "--slo", "100")
BOARD_CLI = Run("accel", "run", "--model", "qwen3-235b", "--system", "clix8", "--context", "long", "--slo", "100")


VALUES = {
    # the FlashAccel headline and the paper's Llama-3.1-405B 15K/6K point (README, docs/llm.md)
    "csix8-100": (ACCEL, cell("csix8@100", "throughput", fmt=mean_of)),
    "csix8-100-geomean": (ACCEL, cell("csix8@100", "throughput", pick=r"/ (\S+)$")),
    "csix8-100-points": (ACCEL, cell("csix8@100", "points")),
    "csix8-100-diff": (HEADLINE, cell("8xCSI / 8xH200 tokens/s/GPU @100ms", "diff")),
    "csix8-100-qwen": (ACCEL, cell("csix8@100", "qwen3-235b", pick=r"^([\d.]+)x")),
    "csix8-100-coder": (ACCEL, cell("csix8@100", "qwen3-coder-480b", pick=r"^([\d.]+)x")),
    "csix8-100-llama": (ACCEL, cell("csix8@100", "llama3.1-405b", pick=r"^([\d.]+)x")),
    "csix8-100-deepseek": (ACCEL, cell("csix8@100", "deepseek-v3", pick=r"^([\d.]+)x")),
    "llama-h200x8-batch": (HEADLINE, cell("Llama-405B 15K/6K batch, 8xH200", "bitline")),
    "llama-csix8-bound": (HEADLINE, cell("Llama-405B 15K/6K 8xCSI @50ms, bandwidth bound", "bitline")),
    "llama-csix8-batch": (HEADLINE, cell("Llama-405B 15K/6K 8xCSI @50ms, full step", "bitline")),
    "llama-csix8-step": (LLAMA, cell("csix8", "step")),
    "llama-csix8-weights": (LLAMA, cell("csix8", "weights")),
    "llama-csix8-kv": (LLAMA, cell("csix8", "KV")),
    "llama-csix8-compute": (LLAMA, cell("csix8", "compute")),
    "llama-csix8-comm": (LLAMA, cell("csix8", "communication")),
    "llama-csix8-overhead": (LLAMA, cell("csix8", "kernel overhead")),
    "llama-csix8-kernels": (LLAMA, cell("csix8", "kernel overhead", fmt=lambda s: f"{float(s) / 0.002:,.0f}")),
    "llama-csix8-exposed": (LLAMA, cell("csix8", "exposed flash latency")),
    "llama-csix8-write": (LLAMA, cell("csix8", "KV write + erase")),
    "llama-csix8-nvlink": (LLAMA, cell("csix8", "NVLink MB")),
    "llama-csix8-flash-gb": (LLAMA, cell("csix8", "flash GB read")),
    "llama-csix8-hbm-gb": (LLAMA, cell("csix8", "HBM GB read")),
    # docs/llm.md: the ablation (the last table of accel-results)
    "abl-full-step": (ACCEL, cell("full FlashAccel", "step")),
    "abl-full-kv": (ACCEL, cell("full FlashAccel", "kv")),
    "abl-full-compute": (ACCEL, cell("full FlashAccel", "compute")),
    "abl-full-comm": (ACCEL, cell("full FlashAccel", "communication")),
    "abl-full-overhead": (ACCEL, cell("full FlashAccel", "overhead")),
    "abl-full-weights": (ACCEL, cell("full FlashAccel", "weights")),
    "abl-full-exposed": (ACCEL, cell("full FlashAccel", "exposed flash latency")),
    "abl-full-write": (ACCEL, cell("full FlashAccel", "kv write")),
    "abl-full-erase": (ACCEL, cell("full FlashAccel", "kv erase")),
    "abl-full-arrange": (ACCEL, cell("full FlashAccel", "kv arrange")),
    "abl-full-tps": (ACCEL, cell("full FlashAccel", "tokens/s/GPU at 100 ms (batch)", pick=r"^(\d+)")),
    "abl-no-prefetch-step": (ACCEL, cell("no prefetch", "step")),
    "abl-no-prefetch-exposed": (ACCEL, cell("no prefetch", "exposed flash latency")),
    "abl-no-weight-layout-step": (ACCEL, cell("no weight layout", "step")),
    "abl-no-weight-layout-exposed": (ACCEL, cell("no weight layout", "exposed flash latency")),
    "abl-no-kv-layout-step": (ACCEL, cell("no KV layout", "step")),
    "abl-no-kv-layout-kv": (ACCEL, cell("no KV layout", "kv")),
    "abl-no-kv-layout-exposed": (ACCEL, cell("no KV layout", "exposed flash latency")),
    "abl-plain-step": (ACCEL, cell("plain HBF", "step")),
    "abl-plain-exposed": (ACCEL, cell("plain HBF", "exposed flash latency")),
    "abl-hbm-step": (ACCEL, cell("HBM only (H200)", "step")),
    "abl-hbm-weights": (ACCEL, cell("HBM only (H200)", "weights")),
    "abl-hbm-kv": (ACCEL, cell("HBM only (H200)", "kv")),
    "abl-hbm-batch": (ACCEL, cell("HBM only (H200)", "tokens/s/GPU at 100 ms (batch)", pick=r"\((\d+)")),
    "abl-hbm-tps": (ACCEL, cell("HBM only (H200)", "tokens/s/GPU at 100 ms (batch)", pick=r"^(\d+)")),
    "csix8-100-tpj": (ACCEL, cell("csix8@100", "tokens/J (activity)")),
    "csix8-100-tpj-board": (ACCEL, cell("csix8@100", "tokens/J (board power)")),
    "writes-kv": (WRITES, lowest_highest("KV writes (GB/s per GPU)", "{}-{}")),
    "writes-program": (WRITES, lowest_highest("programming (% of the planes' time)", "{}-{}")),
    "writes-erase": (WRITES, lowest_highest("erasing (% of the planes' time)", "{}-{}")),
    "writes-tbw": (WRITES, lowest_highest("bytes written in 5 years (% of the TBW)", "{}-{}")),
    "writes-pe": (WRITES, lowest_highest("block erases in 5 years (% of the P/E budget)", "{}-{}")),
    "writes-power-csi": (WRITES, lowest_highest("average power per GPU (W), csix8", "{}-{}")),
    "writes-power-h200": (WRITES, lowest_highest("average power per GPU (W), h200x8", "{}-{}")),
    "writes-power-all": (WRITES, lambda text: "{}-{}".format(cell("average power per GPU (W), h200x8", "lowest")(text),
                                                             cell("average power per GPU (W), csix8", "highest")(text))),
    "writes-tpj-points": (WRITES, lowest_highest("tokens per joule (activity) against h200x8, per point", "{}-{}",
                                                 lambda s: s.rstrip("x"))),
    "clix8-100-tpj": (ACCEL, cell("clix8@100", "tokens/J (activity)")),
    "clix8-100-tpj-board": (ACCEL, cell("clix8@100", "tokens/J (board power)")),
    "board-csix8": (ACCEL, cell("csix8@100", "board power")),
    "board-clix8": (ACCEL, cell("clix8@100", "board power")),
    "board-h200x16": (ACCEL, cell("h200x16@100", "board power")),
    "board-csix16": (ACCEL, cell("csix16@100", "board power")),
    "board-csix4": (ACCEL, cell("csix4@100", "board power")),
    "qwen-agent-h200x8-batch": (ACCEL, cell(("qwen3-235b", "agent", "100"), "h200x8", pick=r"\((\d+)")),
    "qwen-agent-csix8-batch": (ACCEL, cell(("qwen3-235b", "agent", "100"), "csix8", pick=r"\((\d+)")),
    # docs/llm.md: the multi-turn sessions (accel-sessions: "hit rate (prefilled %, mean TTFT)" per load and system)
    "ses-fits-recomputed": (SESSIONS, cell("32 decoding", "csix8", pick=r"\((\d+%)")),
    "ses-128-h200x8": (SESSIONS, cell("128 decoding", "h200x8", pick=r"^([\d.]+)")),
    "ses-512-h200x8-ttft": (SESSIONS, cell("512 decoding", "h200x8", pick=r", ([\d,.]+ m?s)\)")),
    "ses-1024-h200x16-ttft": (SESSIONS, cell("1024 decoding", "h200x16", pick=r", ([\d,.]+ m?s)\)")),
    "ses-1024-csix8-ttft": (SESSIONS, cell("1024 decoding", "csix8", pick=r", ([\d,.]+ m?s)\)")),
    "ses-1024-clix8-ttft": (SESSIONS, cell("1024 decoding", "clix8", pick=r", ([\d,.]+ m?s)\)")),
    "ses-1024-csix8": (SESSIONS, cell("1024 decoding", "csix8", pick=r"^([\d.]+)")),
    "ses-1024-clix8": (SESSIONS, cell("1024 decoding", "clix8", pick=r"^([\d.]+)")),
    "ses-2048-csix8": (SESSIONS, cell("2048 decoding", "csix8", pick=r"^([\d.]+)")),
    "ses-2048-clix8": (SESSIONS, cell("2048 decoding", "clix8", pick=r"^([\d.]+)")),
    # docs/llm.md: single points (collectives per step, accel run's prefill)
    "coll-qwen-csix8": (COLLECTIVES, cell("qwen3-235b, long, 100 ms, csix8", "all-to-all")),
    "coll-qwen-h200x16": (COLLECTIVES, cell("qwen3-235b, long, 100 ms, h200x16", "all-to-all")),
    "coll-qwen-csix16": (COLLECTIVES, cell("qwen3-235b, long, 100 ms, csix16", "all-to-all")),
    "coll-deepseek-nccl": (COLLECTIVES, cell("deepseek-v3, long, 100 ms, csix16", "all-to-all")),
    "coll-deepseek-dedup": (COLLECTIVES, cell("deepseek-v3, long, 100 ms, csix16, `llm.network.all_to_all=dedup`",
                                              "all-to-all")),
    "coll-deepseek-nccl-tps": (COLLECTIVES, cell("deepseek-v3, long, 100 ms, csix16", "tokens/s per GPU")),
    "coll-deepseek-dedup-tps": (COLLECTIVES, cell("deepseek-v3, long, 100 ms, csix16, `llm.network.all_to_all=dedup`",
                                                  "tokens/s per GPU")),
    "prefill-whole": (LATENCY, match(r"s against ([\d.]+) s whole")),
    "prefill-chunked": (LATENCY, match(r"\): ([\d.]+) s against")),
    "prefill-chunked-cost": (LATENCY, match(r"s whole \(([+-][\d.]+%)\)")),
    "design-csix8-fill": (DESIGN, cell("`serving.kv_offload=fill`", "csix8@100", fmt=mean_of)),
    "design-clix8-wc8": (DESIGN, cell("`serving.hbm_weight_cache=8GB`", "clix8@100", fmt=mean_of)),
    "design-clix8-wc16": (DESIGN, cell("`serving.hbm_weight_cache=16GB`", "clix8@100", fmt=mean_of)),
    # docs/calibration.md: the paper's kinds under the real GPUs' calibration
    "cal-h100-headline": (SENSITIVITY, cell("csix8@100", "the H100's calibration")),
    "cal-kernel-overhead-most": (SENSITIVITY, match(r"at most (\d+%)")),
    # docs/calibration.md: whole runs against TensorRT-LLM and NeMo (real-gpus)
    "cal-real-rows": (REAL, match(r"(\d+) rows: median")),
    "real-median": (REAL, match(r"median \|deviation\| ([\d.]+%)")),
    "real-largest": (REAL, match(r"largest ([\d.]+%)")),
    "real-within": (REAL, match(r"(\d+) of \d+ within 20%")),
    "real-trt09-rows": (REAL, count(lambda r: r["source"] == "[trt09]")),
    "real-trt09-median": (REAL, over("deviation", lambda r: r["source"] == "[trt09]",
                                     lambda xs: f"{statistics.median(abs(x) for x in xs):.1f}%")),
    "cal-fp16-rows": (REAL, count(lambda r: r["precision"] == "FP16")),
    "cal-fp16-fast": (REAL, count(lambda r: r["precision"] == "FP16" and number(r["deviation"]) < -20)),
    "cal-fp16-fast-range": (REAL, over("deviation", lambda r: r["precision"] == "FP16" and number(r["deviation"]) < -20,
                                       span("{:.0f}-{:.0f}%", absolute=True))),
    "real-ttft128-fp8": (REAL, over("deviation", lambda r: r["GPU"] in ("H100", "H200-SXM") and r["in/out"] == "128/1",
                                    span("-{:.0f} to -{:.0f}%", absolute=True))),
    "real-ttft128-a100": (REAL, over("deviation", first_token("A100", 128), span("-{:.0f} to -{:.0f}%", absolute=True))),
    "real-a100-2048": (REAL, over("deviation", first_token("A100", 2048), span("-{:.0f} to -{:.0f}%", absolute=True))),
    "real-nemo": (REAL, over("deviation", lambda r: r["source"] == "[nemo]",
                             lambda xs: "/".join(f"{x:+.0f}" for x in xs) + "%")),
    "real-nemo-a100": (REAL, cell(("A100", "llama2-7b", "FP16", "1", "1", "128/20"), "deviation")),
    "real-h200-7b-896": (REAL, cell(("H200-SXM", "llama2-7b", "FP8", "896"), "deviation")),
    "real-h100-7b-896": (REAL, cell(("H100", "llama2-7b", "FP8", "896"), "deviation")),
    "real-h100-70b-long": (REAL, cell(("H100", "llama2-70b", "FP8", "512", "4", "128/2048"), "deviation",
                                      fmt=lambda s: f"{number(s):+.0f}%")),
    # docs/calibration.md: the last column of the mechanisms' table (the rows today)
    "mech-h100-70b-b1024-tp2-128-128": (REAL, cell(("H100", "llama2-70b", "FP8", "1024", "2", "128/128"), "deviation")),
    "mech-h100-70b-b512-tp4-128-2048": (REAL, cell(("H100", "llama2-70b", "FP8", "512", "4", "128/2048"), "deviation")),
    "mech-h100-70b-b96-tp2-2048-128": (REAL, cell(("H100", "llama2-70b", "FP8", "96", "2", "2048/128"), "deviation")),
    "mech-h100-70b-b64-tp2-2048-2048": (REAL, cell(("H100", "llama2-70b", "FP8", "64", "2", "2048/2048"), "deviation")),
    "mech-h100-7b-b896-128-128": (REAL, cell(("H100", "llama2-7b", "FP8", "896", "1", "128/128"), "deviation")),
    "mech-h100-7b-b56-2048-2048": (REAL, cell(("H100", "llama2-7b", "FP8", "56", "1", "2048/2048"), "deviation")),
    "mech-h200-70b-b1024-tp1-128-128": (REAL, cell(("H200-SXM", "llama2-70b", "FP8", "1024", "1", "128/128"), "deviation")),
    "mech-h200-70b-b64-tp1-2048-2048": (REAL, cell(("H200-SXM", "llama2-70b", "FP8", "64", "1", "2048/2048"), "deviation")),
    "mech-h200-7b-b896-128-128": (REAL, cell(("H200-SXM", "llama2-7b", "FP8", "896", "1", "128/128"), "deviation")),
    "mech-h100-7b-ttft-128": (REAL, cell(("H100", "llama2-7b", "FP8", "1", "1", "128/1"), "deviation")),
    "mech-h100-7b-ttft-2048": (REAL, cell(("H100", "llama2-7b", "FP8", "1", "1", "2048/1"), "deviation")),
    "mech-h100-70b-tp4-ttft-128": (REAL, cell(("H100", "llama2-70b", "FP8", "1", "4", "128/1"), "deviation")),
    "mech-h100-70b-tp8-ttft-2048": (REAL, cell(("H100", "llama2-70b", "FP8", "1", "8", "2048/1"), "deviation")),
    "mech-h200-7b-ttft-128": (REAL, cell(("H200-SXM", "llama2-7b", "FP8", "1", "1", "128/1"), "deviation")),
    "mech-h200-7b-ttft-2048": (REAL, cell(("H200-SXM", "llama2-7b", "FP8", "1", "1", "2048/1"), "deviation")),
    "mech-h200-70b-tp4-ttft-128": (REAL, cell(("H200-SXM", "llama2-70b", "FP8", "1", "4", "128/1"), "deviation")),
    "mech-h200-70b-tp4-ttft-2048": (REAL, cell(("H200-SXM", "llama2-70b", "FP8", "1", "4", "2048/1"), "deviation")),
    "mech-a100": (REAL, over("deviation", lambda r: r["source"] == "[trt05]", span("-{:.1f} to -{:.1f}%", absolute=True))),
    "mech-nemo": (REAL, over("deviation", lambda r: r["source"] == "[nemo]", lambda xs: ", ".join(f"{x:.1f}" for x in xs) + "%")),
    # docs/calibration.md, "The rest of the same file": the prose's ranges over its rows
    "oth-llama-a100": (OTHER, over("deviation", oth(["A100"], ["llama2-7b", "llama2-70b"], "output"),
                                   span("{:+.0f} to {:+.0f}%"))),
    "oth-gptj-h100": (OTHER, over("deviation", oth(["H100"], ["gpt-j-6b"], "output"), largest("{:.0f}%"))),
    "oth-gptj-h200": (OTHER, over("deviation", oth(["H200"], ["gpt-j-6b"], "output"),
                                  lambda xs: span("{:+.0f} to {:+.0f}%")(xs).replace("-0%", "0%"))),
    "oth-llama7b-h200": (OTHER, over("deviation", oth(["H200"], ["llama2-7b"], "output"), span("{:+.0f} to {:+.0f}%"))),
    "oth-gqa": (OTHER, over("deviation", oth(["H100", "H200", "A100"], ["mistral-7b", "falcon-180b"], "output"),
                            span("{:+.0f} to {:+.0f}%"))),
    "oth-mixtral": (OTHER, over("deviation", oth(["H100", "H200"], ["mixtral-8x7b"], "output",
                                                 but=("H100", "mixtral-8x7b", "2048/2048", "32")),
                                span("{:+.0f} to {:+.0f}%"))),
    "oth-mixtral-h100-long": (OTHER, cell(("H100", "mixtral-8x7b", "FP8", "32", "2", "2048/2048"), "deviation",
                                          fmt=lambda s: f"{number(s):+.0f}%")),
    "oth-mixtral-first-2048": (OTHER, over("deviation", oth(["H100", "H200"], ["mixtral-8x7b"], "first-token", "2048/1"),
                                           span("-{:.0f} to -{:.0f}%", absolute=True))),
    "oth-mixtral-a100-long": (OTHER, cell(("A100", "mixtral-8x7b", "FP16", "32", "2", "2048/2048"), "deviation",
                                          fmt=lambda s: f"{number(s):+.0f}%")),
    "oth-mixtral-a100-first": (OTHER, cell(("A100", "mixtral-8x7b", "FP16", "1", "2", "128/1"), "deviation",
                                           fmt=lambda s: f"{number(s):+.0f}%")),
    "oth-first-2048": (OTHER, over("deviation", oth(["H100", "H200"], ["gpt-j-6b", "mistral-7b", "falcon-180b"],
                                                    "first-token", "2048/1"), largest("{:.0f}%"))),
    "oth-first-2048-a100": (OTHER, over("deviation", oth(["A100"], ["gpt-j-6b", "mistral-7b", "mixtral-8x7b",
                                                                   "falcon-180b", "llama2-7b", "llama2-70b"],
                                                         "first-token", "2048/1"), span("-{:.0f} to -{:.0f}%", absolute=True))),
    "oth-first-128": (OTHER, over("deviation", oth(["H100", "H200"], ["gpt-j-6b", "mistral-7b", "falcon-180b"],
                                                   "first-token", "128/1"), span("-{:.0f} to -{:.0f}%", absolute=True))),
    "oth-mixtral-first-128-h100": (OTHER, cell(("H100", "mixtral-8x7b", "FP8", "1", "2", "128/1"), "deviation")),
    "oth-mixtral-first-128-h200": (OTHER, cell(("H200", "mixtral-8x7b", "FP8", "1", "2", "128/1"), "deviation")),
    "rel-061-70b-long": (RELEASES, cell(("0.6.1", "H100", "llama2-70b", "FP8", "64", "2", "2048/2048"), "deviation",
                                        fmt=lambda s: f"{number(s):+.0f}%")),
    **{f"rel-050-{m}-first": (RELEASES, cell(("0.5.0", "H100", m, "FP8", "1", tp, "128/1"), "bitline", fmt=fixed(1)))
       for m, tp in (("llama2-7b", "1"), ("gpt-j-6b", "1"), ("llama2-70b", "4"))},
    # docs/calibration.md: found, not adopted (the model's side of each comparison)
    "run-decode-attn-32": (DECODE_ATTN, attn_row("64 64 8 32", -3, fixed(1))),
    "run-decode-attn-512": (DECODE_ATTN, attn_row("64 64 8 512", -3, fixed(1))),
    "run-decode-attn-32-call": (DECODE_ATTN, attn_row("64 64 8 32", -3, lambda s: fixed(1)(with_gaps(s)))),
    "run-decode-attn-512-call": (DECODE_ATTN, attn_row("64 64 8 512", -3, lambda s: fixed(0)(with_gaps(s)))),
    "run-decode-attn-32-dev": (DECODE_ATTN, attn_row("64 64 8 32", -3, lambda s: against(15.1)(with_gaps(s)))),
    "run-decode-attn-512-dev": (DECODE_ATTN, attn_row("64 64 8 512", -3, lambda s: against(61.9)(with_gaps(s)))),
    "run-call-h100": (Run("accel", "attention", "--system", "h100", "--prefill", "1x32x2048x128"),
                      attn_row("1 32 2048", -1, fixed(0))),
    "run-call-a100": (Run("accel", "attention", "--system", "a100", "--prefill", "1x32x2048x128"),
                      attn_row("1 32 2048", -1, fixed(0))),
    "run-call-b200-128": (B200_CALL, attn_row("128 32 128", -1, fixed(0))),
    "run-call-b200-2048": (B200_CALL, attn_row("8 32 2048", -1, fixed(0))),
    "run-call-b200-16384": (B200_CALL, attn_row("1 32 16384", -1, thousands)),
    "run-call-b200-128-dev": (B200_CALL, attn_row("128 32 128", -1, against(309))),
    "run-call-b200-2048-dev": (B200_CALL, attn_row("8 32 2048", -1, against(507))),
    "run-call-b200-16384-dev": (B200_CALL, attn_row("1 32 16384", -1, against(2066))),
    # docs/calibration.md, "GEMM kernels": single kernels the prose names (the deviation in a cell's brackets)
    "gemm-70b-down-1024": (GEMM, cell(("llama2-70b", "1", "1,024"), "down: measured / bitline us", pick=r"\(([+-]\d+%)\)")),
    "gemm-70b-o-tp8-4096": (GEMM, cell(("llama2-70b", "8", "4,096"), "o: measured / bitline us", pick=r"\(([+-]\d+%)\)")),
    "gemm-7b-up-256": (GEMM, cell(("llama2-7b", "1", "256"), "up: measured / bitline us", pick=r"\(([+-]\d+%)\)")),
    "gemm-tp8-small-worst": (GEMM, lambda text: "{:+.0f}%".format(min(
        number(re.search(r"\(([+-]\d+)%\)", v).group(1)) for r in rows(text) if r.get("TP") == "8" and
        r["rows (tokens)"] in ("128", "256") for k, v in r.items() if k.endswith("bitline us")))),
    # docs/calibration.md, "On a B200": the regimes' medians the prose names, and a user's run
    **{f"b200-{p.lower()}-{r}": (B200, cell((p, rows_), "median deviation", fmt=lambda s: f"{number(s):+.0f}%"))
       for p in ("BF16", "FP8", "FP4") for r, rows_ in (("streaming", "1-16 rows"), ("between", "128-512 rows"))
       if not (p == "BF16" and r == "between")},
    "run-b200-fp8-prefill": (Run("accel", "run", "--static-batch", "--model", "llama2-70b", "--system", "b200x1",
                                 "--context", "2048:128", "--batch", "64", "--precision", "fp8"),
                             match(r"prefill ([\d.]+) ms", fixed(2, 1e-3))),
    # the rest of the file, the releases, the H200 against the H100, the batch's first token
    "other-rows": (OTHER, match(r"(\d+) rows: median")),
    "other-median": (OTHER, match(r"rows: median \|deviation\| ([\d.]+%)")),
    "other-within": (OTHER, match(r"(\d+) of \d+ within 20%")),
    "rel-061-median": (RELEASES, match(r"0\.6\.1 -> 0\.9\.0.*?median \|change\| ([\d.]+)%", lambda s: f"{float(s):.0f}%")),
    "rel-061-largest": (RELEASES, match(r"0\.6\.1 -> 0\.9\.0.*?largest ([\d.]+)%", lambda s: f"{float(s):.0f}%")),
    "rel-080-median": (RELEASES, match(r"0\.8\.0 -> 0\.9\.0.*?median \|change\| ([\d.]+%)")),
    "rel-050-ttft": (RELEASES, over("0.9.0 against it", lambda r: r["release"] == "0.5.0" and r["GPU"] == "H100" and
                                    r["in/out"].endswith("/1"), span("{:.0f}-{:.0f}%", absolute=True))),
    "rel-bitline-061": (RELEASES, match(r"against 0\.6\.1's \d+ rows: median \|deviation\| ([\d.]+%)")),
    "rel-bitline-080": (RELEASES, match(r"against 0\.8\.0's \d+ rows: median \|deviation\| ([\d.]+%)")),
    "rel-bitline-050": (RELEASES, match(r"against 0\.5\.0's \d+ rows: median \|deviation\| ([\d.]+%)")),
    "h200-ttft128-measured": (H200, match(r"128 prompt tokens: ([\d.]+-[\d.]+x) faster")),
    "h200-ttft128-bitline": (H200, match(r"faster on the H200, bitline ([\d.]+-[\d.]+x)")),
    "h200-static-bitline": (H200, match(r"static batches: [\d.-]+x, bitline ([\d.]+-[\d.]+x)")),
    "batch-ttft-largest": (BATCH, match(r"first token, \d+ rows: mean \|deviation\| [\d.]+%, largest ([\d.]+%)")),
    "batch-ttft-mean": (BATCH, match(r"first token, \d+ rows: mean \|deviation\| ([\d.]+%)")),
    "batch-ttft-gptj-512": (BATCH, cell(("gpt-j-6b", "512", "128/128", "the batch's first token (ms)"), "deviation")),
    "batch-ttft-others": (BATCH, over("deviation", lambda r: r["metric"].startswith("the batch's first token") and
                                      not (r["model"] == "gpt-j-6b" and r["batch"] == "512"), largest("{:.0f}%"))),
    "batch-tps-512": (BATCH, over("deviation", lambda r: r["metric"] == "output tokens/s per GPU" and r["batch"] == "512",
                                  span("{:+.0f} to {:+.0f}%"))),
    "batch-tps-2048": (BATCH, over("deviation", lambda r: r["metric"] == "output tokens/s per GPU" and
                                   r["in/out"].startswith("2048/"), largest("{:.0f}%"))),
    # kernels: GEMMs on the H100 and the B200, attention, collectives
    "gemm-kernels": (GEMM, cell("all", "kernels")),
    "gemm-compute": (GEMM, cell("1,024-4,096 rows (compute)", "mean abs deviation")),
    "gemm-streaming": (GEMM, cell("1-16 rows (weight streaming)", "mean abs deviation")),
    "gemm-between": (GEMM, cell("128-512 rows (between)", "mean abs deviation")),
    "gemm-between-median": (GEMM, cell("128-512 rows (between)", "median deviation")),
    "b200-kernels": (B200, over("kernels", lambda r: True, lambda xs: f"{sum(xs):.0f}")),
    "b200-bf16-compute": (B200, cell(("BF16", "1,024-8,192 rows"), "median deviation")),
    "b200-fp8-compute": (B200, cell(("FP8", "1,024-8,192 rows"), "median deviation")),
    "b200-fp4-compute": (B200, cell(("FP4", "1,024-8,192 rows"), "median deviation")),
    "b200-fp8-fp4-streaming": (B200, over("median deviation", lambda r: r["precision"] in ("FP8", "FP4") and
                                          r["regime"] == "1-16 rows", span("{:.0f}-{:.0f}%", absolute=True))),
    "attn-mean": (ATTN, match(r"mean \|deviation\| ([\d.]+%)")),
    "attn-median": (ATTN, match(r"median ([\d.]+%)")),
    "attn-largest": (ATTN, match(r"largest ([\d.]+)%", lambda s: f"{float(s):.0f}%")),
    "attn-256-causal": (ATTN, lambda text: span("{:+.0f} to {:+.0f}%")(
        [number(re.search(r"\(([^)]*)\)", c).group(1)) for c in next(r for r in rows(text) if r["head dim"] == "256" and
                                                                       r["mask"] == "causal").values() if "(" in c])),
    "attn-64-causal-short": (ATTN, cell(("64", "causal"), "512", pick=r"\(([+-]\d+%)\)")),
    "coll-8-mean": (COLL, cell("8", "mean abs deviation")),
    "coll-8-largest": (COLL, lambda text: largest("{:.0f}%")(
        [number(re.search(r"\(([^)]*)\)", c).group(1)) for c in next(r for r in rows(text) if r["GPUs"] == "8").values()
         if "(" in c])),
    "coll-2-small": (COLL, lambda text: span("{:.0f}-{:.0f}%", absolute=True)(
        [number(re.search(r"\(([^)]*)\)", next(r for r in rows(text) if r["GPUs"] == "2")[k]).group(1))
         for k in ("1 MiB", "2 MiB", "4 MiB")])),
    "coll-4-1mib": (COLL, cell("4", "1 MiB", pick=r"\(-(\d+%)\)")),
    "coll-16mib-points": (COLL, match(r"from 16 MiB up \((\d+) points\)")),
    "coll-16mib-mean": (COLL, match(r"from 16 MiB up \(\d+ points\): mean ([\d.]+%)")),
    "coll-16mib-largest": (COLL, match(r"from 16 MiB up \(\d+ points\): mean [\d.]+%, largest ([\d.]+)%",
                                       lambda s: f"{float(s):.0f}%")),
    # Flash-Cosmos (docs/validation.md's per-workload table: speedup, arithmetic mean per workload, geometric overall)
    "fc-isp": (COSMOS, cell(("fc/isp", "speedup"), "overall")),
    "fc-isp-bmi": (COSMOS, cell(("fc/isp", "speedup"), "BMI")),
    "fc-isp-ims": (COSMOS, cell(("fc/isp", "speedup"), "IMS")),
    "fc-isp-kcs": (COSMOS, cell(("fc/isp", "speedup"), "KCS")),
    "fc-osp": (COSMOS, cell(("fc/osp", "speedup"), "overall")),
    "fc-osp-bmi": (COSMOS, cell(("fc/osp", "speedup"), "BMI")),
    "fc-osp-ims": (COSMOS, cell(("fc/osp", "speedup"), "IMS")),
    "fc-osp-kcs": (COSMOS, cell(("fc/osp", "speedup"), "KCS")),
    "fc-parabit": (COSMOS, cell(("fc/parabit", "speedup"), "overall")),
    "isp-osp": (COSMOS, cell(("isp/osp", "speedup"), "overall")),
    "fc-osp-energy": (COSMOS, cell(("fc/osp", "energy efficiency"), "overall")),
    "fc-osp-energy-diff": (COSMOS, cell("energy efficiency fc/osp", "diff", fmt=lambda s: f"{number(s):+.0f}%")),
    "fc-osp-energy-over-speedup": (COSMOS, lambda text: "{:.1f}".format(
        number(cell(("fc/osp", "energy efficiency"), "overall")(text)) / number(cell(("fc/osp", "speedup"), "overall")(text)))),
    "fc-osp-energy-bmi": (COSMOS, cell(("fc/osp", "energy efficiency"), "BMI")),
    "fc-osp-energy-ims": (COSMOS, cell(("fc/osp", "energy efficiency"), "IMS", fmt=lambda s: f"{number(s):.0f}")),
    "fc-osp-energy-kcs": (COSMOS, cell(("fc/osp", "energy efficiency"), "KCS")),
    "fc-parabit-energy": (COSMOS, cell(("fc/parabit", "energy efficiency"), "overall")),
    "fc-parabit-energy-diff": (COSMOS, cell("energy efficiency fc/parabit", "diff", fmt=lambda s: f"{number(s):+.0f}%")),
    "fc-parabit-energy-ims": (COSMOS, cell(("fc/parabit", "energy efficiency"), "IMS")),
    "fc-parabit-energy-bmi": (COSMOS, cell(("fc/parabit", "energy efficiency"), "BMI", fmt=lambda s: f"{number(s):.1f}")),
    "bmi-24-osp": (COSMOS, cell("24", "speedup over OSP")),
    "bmi-36-osp": (COSMOS, cell("36", "speedup over OSP")),
    "bmi-24-isp": (COSMOS, cell("24", "ISP")),
    "bmi-36-isp": (COSMOS, cell("36", "ISP")),
    "bmi-24-parabit": (COSMOS, cell("24", "ParaBit")),
    "bmi-36-parabit": (COSMOS, cell("36", "ParaBit")),
    "bmi-dip": (COSMOS, lambda text: f"{1 - number(cell('36', 'speedup over OSP')(text)) / number(cell('24', 'speedup over OSP')(text)):.1%}"),
    "rel-stress-wrong": (COSMOS, cell(("10000 P/E, 365 days", "SLC, no ESP"), "wrong result bits per query",
                                      fmt=lambda s: f"{round(number(s), -1):,.0f}")),
    "rel-stress-rber": (COSMOS, cell(("10000 P/E, 365 days", "SLC, no ESP"), "RBER sensed", fmt=lambda s: f"{float(s):.1e}".replace("e-0", "e-"))),
    "rel-fresh-wrong": (COSMOS, cell(("0 P/E, 0 days", "SLC, no ESP"), "wrong result bits per query", fmt=lambda s: f"{number(s):.0f}")),
    "rel-fresh-rber": (COSMOS, cell(("0 P/E, 0 days", "SLC, no ESP"), "RBER sensed", fmt=lambda s: f"{float(s):.1e}".replace("e-0", "e-"))),
    "isp-osp-range": (COSMOS, lambda text: "{:.2f}-{:.2f}".format(*sorted(
        number(cell(("isp/osp", "speedup"), w)(text)) for w in ("BMI", "IMS", "KCS"))[::2])),
    "isp-osp-ims": (COSMOS, cell(("isp/osp", "speedup"), "IMS")),
    "isp-osp-bmi": (COSMOS, cell(("isp/osp", "speedup"), "BMI")),
    "isp-osp-kcs": (COSMOS, cell(("isp/osp", "speedup"), "KCS")),
    "wbw-esp": (COSMOS, match(r"Sequential write bandwidth \(GB/s\):.*?esp ([\d.]+)")),
    "wbw-mlc": (COSMOS, match(r"Sequential write bandwidth \(GB/s\):.*?mlc ([\d.]+)")),
    "wbw-tlc": (COSMOS, match(r"Sequential write bandwidth \(GB/s\):.*?tlc ([\d.]+)")),
    # docs/cosmos.md: the Star Schema Benchmark at SF 1 (make ssb)
    "ssb-reads": (SSB, ssb("fc_reads", "{:.0f}-{:.0f}")),
    "ssb-fc-ms": (SSB, ssb("FC ms", "{:.0f}-{:.0f}")),
    "ssb-vs-osp": (SSB, ssb("FC vs OSP / ISP / ParaBit", "{:.1f}-{:.1f}", 0)),
    "ssb-vs-isp": (SSB, ssb("FC vs OSP / ISP / ParaBit", "{:.1f}-{:.1f}", 1)),
    "ssb-vs-parabit": (SSB, ssb("FC vs OSP / ISP / ParaBit", "{:.1f}-{:.1f}", 2)),
    "ssb-energy": (SSB, ssb("FC energy vs OSP", "{:.1f}-{:.1f}")),
    "ssb-croaring-selective": (SSB, ssb(None, "{:.1f}-{:.1f}", of=croaring_over_fc, queries=("Q2.3", "Q3.4", "Q4.3"))),
    "ssb-croaring-unselective": (SSB, ssb(None, "{:.0f}-{:.0f}", of=croaring_over_fc, queries=("Q1.1", "Q3.1"))),
    "ssb-croaring": (SSB, match(r"FC vs CRoaring ([\d.]+x)")),
    "ssb-flash-vs-osp": (SSB, cell("geomean", "flash aggregation: reads, FC ms, FC vs OSP", pick=r"([\d.]+)$",
                                   fmt=lambda s: f"{float(s):.0f}")),
    "ssb-flash-reads": (SSB, ssb(None, "{:,.0f} to {:,.0f}", of=lambda r: number(r["flash aggregation: reads, FC ms, FC vs OSP"]))),
    "ssb-flash-slowdown": (SSB, ssb(None, "{:.1f}-{:,.0f}", of=lambda r: float(
        r["flash aggregation: reads, FC ms, FC vs OSP"].split(", ")[1]) / number(r["FC ms"]))),
    # docs/hbf.md: the stack's area against the paper's (make validate, scripts/plot_area.py)
    "hbf-ratios-within": (HBF_AREA, over("deviation", lambda r: r["figure"].startswith("HBF / HBM3e"), largest("{:.0f}%"))),
    "hbf-96-array": (HBF_LAYERS, cell("96", "array die")),
    "hbf-96-circuit": (HBF_LAYERS, cell("96", "circuit die")),
    "hbf-beside": (HBF_AREA, match(r"96 layers: ([\d.]+) mm\^2")),
    "hbf-beside-dev": (HBF_AREA, match(r"mm\^2 \(([+-]\d+%) from")),
    "hbf-beside-area": (HBF_AREA, match(r"HBF / HBM3e area ([\d.]+x), density")),
    "hbf-beside-density": (HBF_AREA, match(r", density ([\d.]+x)\.")),
    # docs/serving.md: the engines against SGLang's published runs
    "engines-rows": (ENGINES, count(lambda r: True)),
    "engines-faster": (ENGINES, count(lambda r: number(r["deviation"]) < 0 if "(ms)" in r["metric"]
                                      else number(r["deviation"]) > 0)),
    "engines-vllm-offline-8b": (ENGINES, cell(("Llama-3.1-8B, 1 x A100-80G, offline", "vLLM"), "deviation")),
    "engines-vllm-offline-70b": (ENGINES, cell(("Llama-3.1-70B, 4 x H100, offline", "vLLM"), "deviation")),
    "engines-vllm-itl-tpot-published": (ENGINES, engine_ratio(["vLLM"], "ITL", "TPOT", "published", "{:.1f}-{:.1f}")),
    "engines-vllm-itl-tpot-bitline": (ENGINES, engine_ratio(["vLLM"], "ITL", "TPOT", "bitline", "{:.1f}-{:.1f}")),
    "engines-e2e-tpot-published": (ENGINES, engine_ratio(["SGLang", "vLLM"], "E2E", "TPOT", "published", "{:.0f}-{:.0f}")),
    "engines-e2e-tpot-bitline": (ENGINES, engine_ratio(["SGLang", "vLLM"], "E2E", "TPOT", "bitline", "{:.0f}-{:.0f}")),
    "engines-tpot-short": (ENGINES, over("deviation", lambda r: r["metric"].startswith("TPOT"), span("{:.0f}-{:.0f}%", absolute=True))),
    "engines-ttft-short": (ENGINES, over("deviation", lambda r: r["metric"].startswith("TTFT"), span("{:.0f}-{:.0f}%", absolute=True))),
    "engines-ttft-gap-sglang": (ENGINES, engine_gap("SGLang", "TTFT", "{:.0f}-{:.0f}")),
    "engines-ttft-gap-vllm": (ENGINES, engine_gap("vLLM", "TTFT", "{:.0f}-{:.0f}")),
    "engines-sglang-offline": (ENGINES, over("deviation", lambda r: r["engine"] == "SGLang" and r["metric"] == "output tokens/s",
                                             span("{:.0f}-{:.0f}%"))),
    "engines-vllm-offline": (ENGINES, over("deviation", lambda r: r["engine"] == "vLLM" and r["metric"] == "output tokens/s",
                                           span("{:.0f}-{:.0f}%"))),
    # docs/serving.md: the FlashAccel systems' serving capacity, against 8 x H200
    "cap-deepseek-csix8": (CAPACITY, cell(("deepseek-v3", "csix8"), "capacity (requests/s)")),
    "cap-csix8-qwen": (CAPACITY, capacity_ratio("csix8", ["qwen3-235b"], "{:.2f}x")),
    "cap-csix8-deepseek": (CAPACITY, capacity_ratio("csix8", ["deepseek-v3"], "{:.2f}x")),
    "cap-csix8-llama": (CAPACITY, capacity_ratio("csix8", ["llama3.1-405b"], "{:.2f}x")),
    "cap-csix8-coder": (CAPACITY, capacity_ratio("csix8", ["qwen3-coder-480b"], "{:.1f}x")),
    "cap-clix8-others": (CAPACITY, capacity_ratio("clix8", ["qwen3-235b", "llama3.1-405b", "deepseek-v3"], "{:.2f}-{:.2f}x")),
    "cap-clix8-coder": (CAPACITY, capacity_ratio("clix8", ["qwen3-coder-480b"], "{:.1f}x")),
    "cap-colocated-csix8-others": (COLOCATED, capacity_ratio("csix8", ["qwen3-235b", "llama3.1-405b", "deepseek-v3"],
                                                             "{:.2f}-{:.2f}x")),
    "cap-colocated-csix8-coder": (COLOCATED, capacity_ratio("csix8", ["qwen3-coder-480b"], "{:.1f}x")),
    # the general SSD against the 980 PRO's and 970 EVO Plus's published figures
    "drv-980-qd1-read": (DRIVES, drive("980", "randread-4k-qd1", "bitline", fmt=kilo1)),
    "drv-990-qd1-read": (DRIVES, drive("990", "randread-4k-qd1", "bitline", fmt=kilo1)),
    "drv-990-qd1-read-dev": (DRIVES, drive("990", "randread-4k-qd1", "deviation", "20,020", fmt=pct)),
    "drv-990-seqread": (DRIVES, drive("990", "seqread-128k-qd32", "deviation", "7,450", fmt=pct)),
    "drv-980-seqwrite": (DRIVES, drive("980", "seqwrite-128k-qd32", "bitline")),
    "drv-970-seqwrite": (DRIVES, drive("970", "seqwrite-128k-qd32", "bitline")),
    "drv-990-seqwrite": (DRIVES, drive("990", "seqwrite-128k-qd32", "bitline")),
    "drv-980-seqwrite-dev": (DRIVES, drive("980", "seqwrite-128k-qd32", "deviation", fmt=pct)),
    "drv-970-seqwrite-dev": (DRIVES, drive("970", "seqwrite-128k-qd32", "deviation", fmt=pct)),
    "drv-990-seqwrite-dev": (DRIVES, drive("990", "seqwrite-128k-qd32", "deviation", "6,900", fmt=pct)),
    "drv-980-fill": (DRIVES, drive("980", "seqwrite-128k-qd32-fill", "bitline")),
    "drv-970-fill": (DRIVES, drive("970", "seqwrite-128k-qd32-fill", "bitline")),
    "drv-990-fill": (DRIVES, drive("990", "seqwrite-128k-qd32-fill", "bitline")),
    "drv-980-fill-dev": (DRIVES, drive("980", "seqwrite-128k-qd32-fill", "deviation", fmt=pct)),
    "drv-970-fill-dev": (DRIVES, drive("970", "seqwrite-128k-qd32-fill", "deviation", fmt=pct)),
    "drv-980-randread-dev": (DRIVES, drive("980", "randread-4k-qd32-t16", "deviation", fmt=pct)),
    "drv-970-randread-dev": (DRIVES, drive("970", "randread-4k-qd32-t4", "deviation", fmt=pct)),
    "drv-990-randread-dev": (DRIVES, drive("990", "randread-4k-qd32-t16", "deviation", "1,200,000", fmt=pct)),
    "drv-980-randread": (DRIVES, drive("980", "randread-4k-qd32-t16", "bitline")),
    "drv-970-randread": (DRIVES, drive("970", "randread-4k-qd32-t4", "bitline")),
    "drv-980-randwrite": (DRIVES, drive("980", "randwrite-4k-qd32-fresh", "bitline", fmt=mega)),
    "drv-970-randwrite": (DRIVES, drive("970", "randwrite-4k-qd32-fresh", "bitline", fmt=kilo)),
    "drv-990-randwrite": (DRIVES, drive("990", "randwrite-4k-qd32-fresh", "bitline", fmt=kilo)),
    "drv-980-randwrite-dev": (DRIVES, drive("980", "randwrite-4k-qd32-fresh", "deviation", fmt=pct)),
    "drv-970-randwrite-dev": (DRIVES, drive("970", "randwrite-4k-qd32-fresh", "deviation", "550,000", fmt=pct)),
    "drv-970-randwrite-review-dev": (DRIVES, drive("970", "randwrite-4k-qd32-fresh", "deviation", "354,973", fmt=pct)),
    "drv-990-randwrite-dev": (DRIVES, drive("990", "randwrite-4k-qd32-fresh", "deviation", "1,550,000", fmt=pct)),
    "drv-970-qd1-write-dev": (DRIVES, drive("970", "randwrite-4k-qd1", "deviation", "60,000", fmt=pct)),
    "drv-970-qd1-write-review-dev": (DRIVES, drive("970", "randwrite-4k-qd1", "deviation", "163,140", fmt=pct)),
    "drv-980-steady": (DRIVES, drive("980", "randwrite-4k-qd32-steady", "bitline", fmt=kilo1)),
    "drv-970-steady": (DRIVES, drive("970", "randwrite-4k-qd32-steady", "bitline", fmt=kilo1)),
    "drv-990-steady": (DRIVES, drive("990", "randwrite-4k-qd32-steady", "bitline", fmt=kilo1)),
    "drives-980-970-within": (DRIVES, count(within_15, lambda r: "990" not in r["drive"])),
    "drives-980-970-published": (DRIVES, count(lambda r: r["deviation"] != "-", lambda r: "990" not in r["drive"])),
    # the CSV columns of `serve run --requests-out F.csv` and `serve sweep --csv F`
    "serve-requests-csv": (None, Columns("serve", "run", "--model", "llama2-7b", "--system", "h100x1", "--rate", "4",
                                         "--input", "300", "--output", "50", "--requests", "20", "--requests-out",
                                         "{csv}")),
    "serve-sweep-csv": (None, Columns("serve", "sweep", "--model", "llama2-7b", "--system", "h100x1", "--rates", "1,4",
                                      "--input", "300", "--output", "50", "--requests", "20", "--csv", "{csv}")),
    # ---- figures of example runs (Run: read from what the command prints; checked by make doc-commands)
    # README.md: the sample's command prints this many lines (its text block shows some of them)
    "run-sample-lines": (Run("accel", "run", "--model", "llama3.1-405b", "--system", "csi", "--gpus", "8", "--context",
                             "15000:6000", "--slo", "50"), lambda text: str(len(text.strip("\n").split("\n")))),
    # docs/llm.md
    "run-validate-classic": (Run("accel", "validate", "--models", "gpt-j-6b", "opt-66b", "gpt-neox-20b", "mixtral-8x7b",
                                 "falcon-180b", "--systems", "csix8", "clix4", "--batch", "16"),
                             match(r"largest \|error\| of the fast model: ([\d.]+%)")),
    "run-coder-dp-hbm": (CODER_H200, match(r"dp -> .*?, ([\d.]+) GB of HBM used")),
    "run-coder-tp2": (CODER_H200, match(r"tp2 -> batch (\d+)")),
    "run-coder-tp4": (CODER_H200, match(r"tp4 -> batch (\d+)")),
    "run-coder-tp8": (CODER_H200, match(r"tp8 -> batch (\d+)")),
    "coder-h200x8-long-batch": (ACCEL, cell(("qwen3-coder-480b", "long", "100"), "h200x8", pick=r"\((\d+)")),
    "coder-h200x8-agent-batch": (ACCEL, cell(("qwen3-coder-480b", "agent", "100"), "h200x8", pick=r"\((\d+)")),
    "coder-h200x8-long-tps": (ACCEL, cell(("qwen3-coder-480b", "long", "100"), "h200x8", pick=r"^(\d+)")),
    "coder-h200x8-agent-tps": (ACCEL, cell(("qwen3-coder-480b", "agent", "100"), "h200x8", pick=r"^(\d+)")),
    "run-gemm-24576": (GEMM_H100, field("4096", "1536", "24576", at=-3, fmt=fixed(0))),
    "run-gemm-32768": (GEMM_H100, field("4096", "512", "32768", at=-3, fmt=fixed(0))),
    "run-nvls-ring": (Run("accel", "run", "--model", "llama2-70b", "--system", "h100x8", "--context", "128:1", "--batch",
                          "1024", "--static-batch"), match(r"prefill ([\d.]+) ms", fixed(2, 1e-3))),
    "run-nvls-nvls": (Run("accel", "run", "--model", "llama2-70b", "--system", "h100x8", "--context", "128:1", "--batch",
                          "1024", "--static-batch", "--set", "llm.network.node_all_reduce=nvls"),
                      match(r"prefill ([\d.]+) ms", fixed(2, 1e-3))),
    "run-sarathi-ttft": (serve_llama2("h100x1", "serving.engine.kind=sarathi_serve"), field("TTFT", "mean", at=2, fmt=fixed(1))),
    "run-sarathi-tpot": (serve_llama2("h100x1", "serving.engine.kind=sarathi_serve"), field("TPOT", "mean", at=2)),
    "run-none-ttft": (serve_llama2("h100x1"), field("TTFT", "mean", at=2, fmt=fixed(1))),
    "run-none-ttft-2": (serve_llama2("h100x1"), field("TTFT", "mean", at=2)),
    "run-none-tpot": (serve_llama2("h100x1"), field("TPOT", "mean", at=2)),
    "run-sarathi-tp2-tpot": (serve_llama2("h100x2", "serving.engine.kind=sarathi_serve"), field("TPOT", "mean", at=2)),
    "run-none-tp2-tpot": (serve_llama2("h100x2"), field("TPOT", "mean", at=2)),
    "run-request-ttft": (serve_llama2("h100x1", "serving.engine.kind=custom", "serving.engine.request=2ms"),
                         field("TTFT", "mean", at=2)),
    "run-span-all-llama": (SPAN_ALL_LLAMA, match(r"(?m)^  batch (\d+) \(")),
    "run-span-all-llama-kv": (SPAN_ALL_LLAMA, ratio(match(r"KV ([\d.]+) GB"), match(r"(?m)^  batch (\d+) \("), "{:.1f}")),
    "run-span-all-qwen": (Run("accel", "run", "--model", "qwen3-235b", "--system", "csix8", "--context", "long", "--slo",
                              "100000", "--set", "hbf.runtime.kv_span=all"), match(r"\((\d+) per attention rank\)")),
    "run-span-fit-llama": (Run("accel", "run", "--model", "llama3.1-405b", "--system", "csix8", "--context", "long",
                               "--slo", "100000"), match(r"(?m)^  batch (\d+) \(", thousands)),
    "run-full-batch": (FULL_H200, match(r"(?m)^  batch (\d+) \(")),
    "run-full-weights": (FULL_H200, match(r"weights ([\d.]+) GB", fixed(1))),
    "run-full-left": (FULL_H200, lambda text: f"{full_left(text):.1f}"),
    "run-full-requests": (FULL_H200, lambda text: f"{full_left(text) / 1.355:.1f}"),
    "run-full-no-reserve": (Run("accel", "run", "--model", "llama3.1-405b", "--system", "h200x8", "--context", "agent",
                                "--slo", "100000", "--set", "serving.capacity_context=full", "--set",
                                "llm.runtime_reserve=0GB"), match(r"(?m)^  batch (\d+) \(")),
    "run-board-h200-die": (BOARD_H200, match(r"GPU die (\d+)")),
    "run-board-h200-hbm": (BOARD_H200, match(r"HBM stacks (\d+)")),
    "run-board-csi-hbm": (ABLATION_FULL, match(r"HBM stacks (\d+)")),
    "run-board-cli-hbm": (BOARD_CLI, match(r"HBM stacks (\d+)")),
    "run-board-csi-hbf": (ABLATION_FULL, match(r"HBF stacks (\d+)")),
    "run-board-cli-hbf": (BOARD_CLI, match(r"HBF stacks (\d+)")),
    "run-board-csi-base": (ABLATION_FULL, match(r"HBF base dies (\d+)")),
    "run-board-cli-base": (BOARD_CLI, match(r"HBF base dies (\d+)")),
    "run-board-h200": (BOARD_H200, match(r"board power (\d+) W")),
    "run-board-csi": (ABLATION_FULL, match(r"board power (\d+) W")),
    "run-board-cli": (BOARD_CLI, match(r"board power (\d+) W")),
    "run-ablation-blocks": (ABLATION_FULL, match(r"HBF blocks (\d+) of")),
    "run-ablation-kv": (ABLATION_FULL, match(r"KV ([\d.]+) GB", fixed(0))),
    # docs/serving.md
    **{f"run-engine-{e}-{what}": (engine_lone(e), how) for e in ("ideal", "vllm", "vllm-v0", "sglang", "tensorrt-llm")
       for what, how in (("pool", match(r"\((\d+) tokens per attention rank", thousands)),
                         ("ttft", field("TTFT", "mean", at=2)), ("tpot", field("TPOT", "mean", at=2)))},
    "run-engine-ideal-tpot-2": (engine_lone("ideal"), field("TPOT", "mean", at=2)),
    "run-engine-ideal-ttft-2": (engine_lone("ideal"), field("TTFT", "mean", at=2)),
    "run-swap-recompute-preemptions": (swap_example(), json_at("summary.preemptions")),
    "run-swap-recompute-tokens": (swap_example(), json_at("summary.tokens.recomputed", lambda v: f"{v / 1e3:.0f}K")),
    "run-swap-preemptions": (swap_example("--set", "serve.preemption=swap"), json_at("summary.preemptions")),
    "run-swap-out": (swap_example("--set", "serve.preemption=swap"), json_at("summary.swaps.out")),
    "run-swap-tokens": (swap_example("--set", "serve.preemption=swap"),
                        json_at("summary.tokens.recomputed", lambda v: f"{v / 1e3:.0f}K")),
    "run-swap-recompute-tps": (swap_example(), json_at("summary.output_tokens_per_s", lambda v: f"{v:,.0f}")),
    "run-swap-tps": (swap_example("--set", "serve.preemption=swap"), json_at("summary.output_tokens_per_s", lambda v: f"{v:,.0f}")),
    "run-bench-iterations": (SERVE_BENCH, json_at("summary.iterations", lambda v: f"{v:,}")),
    "run-bench-ideal-iterations": (Run(*SERVE_BENCH.args[:7], "ideal", *SERVE_BENCH.args[8:]),
                                   json_at("summary.iterations", lambda v: f"{v:,}")),
    "run-bench-decode-shapes": (SERVE_BENCH, json_at("summary.shapes_timed.decode")),
    "run-bench-prefill-shapes": (SERVE_BENCH, json_at("summary.shapes_timed.prefill")),
    "run-bench-shapes": (SERVE_BENCH, lambda t: str(sum(json.loads(t)["summary"]["shapes_timed"].values()))),
    "run-prefix-off-ttft": (PREFIX, field("TTFT", "mean", at=2, fmt=fixed(0))),
    "run-prefix-on-ttft": (Run(*PREFIX.args, "--prefix-caching"), field("TTFT", "mean", at=2, fmt=fixed(0))),
    "run-prefix-hit": (Run(*PREFIX.args, "--prefix-caching"), match(r"served from it \(([\d.]+%)")),
    "run-disagg-colocated-tpot": (disaggregation(), field("TPOT", "mean", at=2, fmt=fixed(1))),
    "run-disagg-colocated-itl": (disaggregation(), field("ITL", "mean", at=-2, fmt=fixed(0))),
    "run-disagg-colocated-ttft": (disaggregation(), field("TTFT", "mean", at=2, fmt=fixed(0))),
    "run-disagg-tpot": (disaggregation("--disaggregate", "1:1"), field("TPOT", "mean", at=2, fmt=fixed(1))),
    "run-disagg-itl": (disaggregation("--disaggregate", "1:1"), field("ITL", "mean", at=-2, fmt=fixed(0))),
    "run-disagg-ttft": (disaggregation("--disaggregate", "1:1"), field("TTFT", "mean", at=2, fmt=fixed(0))),
    "run-disagg-transfer": (disaggregation("--disaggregate", "1:1"), match(r"mean ([\d.]+) ms each")),
    # docs/ssd.md: the work estimate, MQSim's scheduler per run, the drives' one-off runs, MQSim's inputs
    "run-read-estimated": (mqsim_inputs("device.xml", "read.xml"), scenario("work_estimate.requests",
                                                                            lambda s: f"{number(s) / 1e6:.1f} M")),
    "run-read-simulated": (mqsim_inputs("device.xml", "read.xml"), scenario("requests", lambda s: f"{number(s) / 1e6:.2f} M")),
    **{f"run-mqsim-sched-{w}-{sys_}": (Run("cosmos", "run", "--workload", w, "--system", sys_, "--general-device"),
                                       match(r"\(([+-][\d.]+%)\); SSD part"))
       for w in ("bmi", "ims", "kcs") for sys_ in ("osp", "isp", "parabit", "fc")},
    "drv-980-qd1-latency": (DRIVES, drive("980", "randread-4k-qd1", "bitline", fmt=lambda s: f"{1e6 / number(s):.1f}")),
    "drv-970-qd1-latency": (DRIVES, drive("970", "randread-4k-qd1", "bitline", fmt=lambda s: f"{1e6 / number(s):.1f}")),
    "drv-990-qd1-latency": (DRIVES, drive("990", "randread-4k-qd1", "bitline", fmt=lambda s: f"{1e6 / number(s):.1f}")),
    "drv-980-qd32-little": (DRIVES, drive("980", "randread-4k-qd1", "bitline", fmt=lambda s: f"{32 * number(s) / 1e3:.0f} K")),
    "drv-970-qd32-little": (DRIVES, drive("970", "randread-4k-qd1", "bitline", fmt=lambda s: f"{32 * number(s) / 1e3:.0f} K")),
    "drv-980-randwrite-of-bound": (DRIVES, drive("980", "randwrite-4k-qd32-fresh", "bitline", fmt=share_of(32 * 8 / 223.4e-6))),
    "drv-990-randwrite-of-bound": (DRIVES, drive("990", "randwrite-4k-qd32-fresh", "bitline", "1,550,000",
                                                 fmt=share_of(16 * 16 / 232.8e-6))),
    "run-980-seqwrite-one-page": (fio("980pro", "seqwrite-128k-qd32", "ssd_device.cache_program=false"),
                                  match(r"\(([\d.]+)MB/s\)", thousands)),
    "run-980-seqwrite-one-page-dev": (fio("980pro", "seqwrite-128k-qd32", "ssd_device.cache_program=false"),
                                      match(r"\(([\d.]+)MB/s\)", against(5000))),
    "run-980-seqwrite-one-page-share": (fio("980pro", "seqwrite-128k-qd32", "ssd_device.cache_program=false"),
                                        match(r"\(([\d.]+)MB/s\)", share_of(4700))),
    "run-980-randread-one-plane-dev": (fio("980pro", "randread-4k-qd32-t16", ONE_PLANE), match(r"IOPS=(\d+)", against(1e6))),
    "run-970-randread-one-plane-dev": (fio("970evoplus", "randread-4k-qd32-t4", ONE_PLANE), match(r"IOPS=(\d+)", against(6e5))),
    "run-980-randread-qd32-k": (fio("980pro", "randread-4k-qd32"), match(r"IOPS=(\d+)", kilo_of)),
    "run-970-randread-qd32-k": (fio("970evoplus", "randread-4k-qd32"), match(r"IOPS=(\d+)", kilo_of)),
    "run-990-randread-qd32-k": (fio("990pro", "randread-4k-qd32"), match(r"IOPS=(\d+)", kilo_of)),
    "run-980-units-per-page": (Run(*fio("980pro", "randwrite-4k-qd32-fresh").args, "--json", "{json}"), units_per_page),
    "run-990-units-per-page": (Run(*fio("990pro", "randwrite-4k-qd32-fresh").args, "--json", "{json}"), units_per_page),
    **{f"run-{d}-randwrite-page-k": (fio(d, "randwrite-4k-qd32-fresh", *PAGE_LEVEL), match(r"IOPS=(\d+)", kilo_of))
       for d in ("980pro", "970evoplus", "990pro")},
    "run-980pro-randwrite-page-dev": (fio("980pro", "randwrite-4k-qd32-fresh", *PAGE_LEVEL), match(r"IOPS=(\d+)", against(1e6))),
    "run-970evoplus-randwrite-page-dev": (fio("970evoplus", "randwrite-4k-qd32-fresh", *PAGE_LEVEL),
                                          match(r"IOPS=(\d+)", against(550000))),
    "run-990pro-randwrite-page-dev": (fio("990pro", "randwrite-4k-qd32-fresh", *PAGE_LEVEL), match(r"IOPS=(\d+)", against(1.55e6))),
    "run-970-qd1-write-page-k": (fio("970evoplus", "randwrite-4k-qd1", *PAGE_LEVEL), match(r"IOPS=(\d+)", kilo_of)),
    "run-970-qd1-write-page-dev": (fio("970evoplus", "randwrite-4k-qd1", *PAGE_LEVEL), match(r"IOPS=(\d+)", against(163140))),
    # docs/ssd.md: the mapping units and the cache program, each alone (the "both" column is the drives table's)
    **{f"run-units-{d}-{w}-{col}": (fio(d, w, *sets), match(r"IOPS=(\d+)", thousands) if w.startswith("rand")
                                    else match(r"\(([\d.]+)MB/s\)", thousands))
       for d in ("980pro", "970evoplus", "990pro") for w in ("randwrite-4k-qd32-fresh", "seqwrite-128k-qd32")
       for col, sets in (("page", PAGE_LEVEL), ("units", ("ssd_device.cache_program=false",)),
                         ("cache", ("ssd_device.mapping_unit=0",)))},
    "run-units-980pro-randwrite-both": (DRIVES, drive("980", "randwrite-4k-qd32-fresh", "bitline")),
    "run-units-970evoplus-randwrite-both": (DRIVES, drive("970", "randwrite-4k-qd32-fresh", "bitline")),
    "run-units-990pro-randwrite-both": (DRIVES, drive("990", "randwrite-4k-qd32-fresh", "bitline")),
    "run-units-980pro-seqwrite-both": (DRIVES, drive("980", "seqwrite-128k-qd32", "bitline", fmt=lambda s: s.split()[0])),
    "run-units-970evoplus-seqwrite-both": (DRIVES, drive("970", "seqwrite-128k-qd32", "bitline", fmt=lambda s: s.split()[0])),
    "run-units-990pro-seqwrite-both": (DRIVES, drive("990", "seqwrite-128k-qd32", "bitline", fmt=lambda s: s.split()[0])),
    "run-units-990-seqwrite-change": (Runs(fio("990pro", "seqwrite-128k-qd32", *PAGE_LEVEL),
                                           fio("990pro", "seqwrite-128k-qd32", "ssd_device.cache_program=false")),
                                      change(MBPS, "{:.0%}", absolute=True)),
    # docs/ssd.md: host queues and multi-plane reads
    "run-hq-980-t16-one": (fio("980pro", "randread-4k-qd32-t16", ONE_PLANE), match(r"IOPS=(\d+)", thousands)),
    "run-hq-980-t16-one-dev": (fio("980pro", "randread-4k-qd32-t16", ONE_PLANE), match(r"IOPS=(\d+)", against(1e6))),
    "run-hq-980-t16-one-clat": (fio("980pro", "randread-4k-qd32-t16", ONE_PLANE), CLAT),
    "run-hq-980-t16-clat": (fio("980pro", "randread-4k-qd32-t16"), CLAT),
    "run-hq-980-qd32-one": (fio("980pro", "randread-4k-qd32", ONE_PLANE), match(r"IOPS=(\d+)", thousands)),
    "run-hq-980-qd32": (fio("980pro", "randread-4k-qd32"), match(r"IOPS=(\d+)", thousands)),
    "run-hq-970-t4-one": (fio("970evoplus", "randread-4k-qd32-t4", ONE_PLANE), match(r"IOPS=(\d+)", thousands)),
    "run-hq-970-t4-one-dev": (fio("970evoplus", "randread-4k-qd32-t4", ONE_PLANE), match(r"IOPS=(\d+)", against(6e5))),
    "run-hq-970-t4-one-clat": (fio("970evoplus", "randread-4k-qd32-t4", ONE_PLANE), CLAT),
    "run-hq-970-t4-clat": (fio("970evoplus", "randread-4k-qd32-t4"), CLAT),
    "run-hq-970-qd32-one": (fio("970evoplus", "randread-4k-qd32", ONE_PLANE), match(r"IOPS=(\d+)", thousands)),
    "run-hq-970-qd32": (fio("970evoplus", "randread-4k-qd32"), match(r"IOPS=(\d+)", thousands)),
    "run-hq-980-no-gating": (fio("980pro", "randread-4k-qd32-t16", NO_GATING), match(r"IOPS=(\d+)", thousands)),
    "run-hq-980-no-gating-share": (fio("980pro", "randread-4k-qd32-t16", NO_GATING),
                                   match(r"IOPS=(\d+)", share_of(32 * 2 / (45e-6 + 2 * 2.93e-6)))),
    "run-hq-970-no-gating": (fio("970evoplus", "randread-4k-qd32-t4", NO_GATING), match(r"IOPS=(\d+)", thousands)),
    "run-hq-980-no-gating-one": (fio("980pro", "randread-4k-qd32-t16", NO_GATING, ONE_PLANE), match(r"IOPS=(\d+)", thousands)),
    "run-hq-970-no-gating-one": (fio("970evoplus", "randread-4k-qd32-t4", NO_GATING, ONE_PLANE), match(r"IOPS=(\d+)", thousands)),
    # docs/ssd.md: side by side with MQSim (bitline's columns; MQSim's are its measured figures)
    "run-mq-w-iops": (MQ_WRITE, scenario("iops", fixed(0))),
    "run-mq-w-iops-0": (MQ_WRITE, flow(0, "iops", fixed(0))),
    "run-mq-w-iops-1": (MQ_WRITE, flow(1, "iops", fixed(0))),
    "run-mq-w-iops-dev": (MQ_WRITE, scenario("iops", mqsim_dev(37143))),
    "run-mq-w-lat": (MQ_WRITE, flow(0, "device_response_time.mean_us", fixed(0))),
    "run-mq-w-lat-dev": (MQ_WRITE, flow(0, "device_response_time.mean_us", mqsim_dev(484))),
    "run-mq-r-iops": (MQ_READ, scenario("iops", fixed(0))),
    "run-mq-r-iops-0": (MQ_READ, flow(0, "iops", fixed(0))),
    "run-mq-r-iops-1": (MQ_READ, flow(1, "iops", fixed(0))),
    "run-mq-r-iops-dev": (MQ_READ, scenario("iops", mqsim_dev(153146, "{:+.2%}"))),
    "run-mq-r-lat-0": (MQ_READ, flow(0, "device_response_time.mean_us", fixed(0))),
    "run-mq-r-lat-1": (MQ_READ, flow(1, "device_response_time.mean_us", fixed(0))),
    "run-mq-r-lat": (MQ_READ, weighted_latency(lambda x: f"{x:.0f}")),
    "run-mq-r-lat-dev": (MQ_READ, weighted_latency(lambda x: mqsim_dev(209)(str(x)))),
    "run-mq-w-cmt-misses": (MQ_WRITE, scenario("ftl.cmt_write_misses")),
    "run-mq-w-cmt-hits": (MQ_WRITE, scenario("ftl.cmt_write_hits")),
    "run-mq-w-translation-reads": (MQ_WRITE, scenario("ftl.translation_reads")),
    "run-mq-w-writebacks": (MQ_WRITE, scenario("ftl.translation_writebacks")),
    "run-mq-w-flash-reads": (MQ_WRITE, scenario("flash.reads")),
    "run-mq-w-flash-programs": (MQ_WRITE, scenario("flash.programs")),
    "run-mq-r-cmt-misses": (MQ_READ, scenario("ftl.cmt_misses")),
    "run-mq-r-cmt-hits": (MQ_READ, scenario("ftl.cmt_hits")),
    "run-mq-r-translation-reads": (MQ_READ, scenario("ftl.translation_reads")),
    "run-mq-r-writebacks": (MQ_READ, scenario("ftl.translation_writebacks")),
    "run-mq-r-writebacks-more": (MQ_READ, scenario("ftl.translation_writebacks", lambda s: f"{72233 / number(s) - 1:.0%}")),
    "run-mq-r-flash-reads": (MQ_READ, scenario("flash.reads")),
    "run-mq-r-multiplane": (MQ_READ, scenario("flash.multiplane_ops")),
    **{f"run-gc-{p.lower()}-{what}": (mqsim_inputs("device-gc.xml", "gc-write.xml", f"ssd_device.gc_policy={p}"), how)
       for p, whats in (("GREEDY", "iops gc pages lat"), ("RGA", "iops requests gc pages wa lat"),
                        ("RANDOM", "iops gc pages lat"), ("FIFO", "iops"))
       for what, how in GC_FIGURES.items() if what in whats.split()},
    "run-gc-rga-iops-dev": (mqsim_inputs("device-gc.xml", "gc-write.xml", "ssd_device.gc_policy=RGA"),
                            scenario("iops", mqsim_dev(1620))),
    "run-gc-rga-lat-dev": (mqsim_inputs("device-gc.xml", "gc-write.xml", "ssd_device.gc_policy=RGA"),
                           flow(0, "device_response_time.mean_us", mqsim_dev(9875))),
    "run-gc-greedy-iops-dev": (mqsim_inputs("device-gc.xml", "gc-write.xml", "ssd_device.gc_policy=GREEDY"),
                               scenario("iops", mqsim_dev(1646))),
    "run-gc-random-iops-dev": (mqsim_inputs("device-gc.xml", "gc-write.xml", "ssd_device.gc_policy=RANDOM"),
                               scenario("iops", mqsim_dev(1439))),
    "run-gc-greedy-lat-dev": (mqsim_inputs("device-gc.xml", "gc-write.xml", "ssd_device.gc_policy=GREEDY"),
                              flow(0, "device_response_time.mean_us", mqsim_dev(9728))),
    "run-gc-random-lat-dev": (mqsim_inputs("device-gc.xml", "gc-write.xml", "ssd_device.gc_policy=RANDOM"),
                              flow(0, "device_response_time.mean_us", mqsim_dev(11180))),
    # docs/cosmos.md
    "run-general-device-slower": (GENERAL_DEVICE_SLOWER, lambda texts: "{:.0f}-{:.0f}".format(*(
        f(number(match(r"\(\+([\d.]+)%\); SSD part")(t)) for t in texts) for f in (min, max)))),
    "run-ims-isp-channels-busy": (Run("cosmos", "run", "--workload", "ims", "--system", "isp"),
                                  ratio(match(r"channels ([\d.]+) s \(sum\)", lambda x: str(number(x) / 8)),
                                        match(r"time ([\d.]+) s,"), "{:.0%}")),
    "run-ssb1-fc-bitmaps": (SSB1_INDEX, json_at("index.systems.fc.bitmaps")),
    "run-ssb1-fc-mb": (SSB1_INDEX, json_at("index.systems.fc.bytes", lambda v: f"{v / 1e6:.0f}")),
    "run-ssb1-fc-blocks": (SSB1_INDEX, json_at("index.systems.fc.blocks_per_plane")),
    "run-ssb1-fc-write-ms": (SSB1_INDEX, json_at("index.systems.fc.write_time_s", lambda v: f"{v * 1e3:.0f}")),
    "run-ssb1-osp-bitmaps": (SSB1_INDEX, json_at("index.systems.osp.bitmaps")),
    "run-ssb1-osp-mb": (SSB1_INDEX, json_at("index.systems.osp.bytes", lambda v: f"{v / 1e6:.0f}")),
    "run-ssb1-parabit-bitmaps": (SSB1_INDEX, json_at("index.systems.parabit.bitmaps")),
    "run-ssb1-parabit-mb": (SSB1_INDEX, json_at("index.systems.parabit.bytes", lambda v: f"{v / 1e6:.0f}")),
    "run-ssb100-fc-gb": (SSB100_INDEX, json_at("index.systems.fc.bytes", lambda v: f"{v / 1e9:.1f}")),
    "run-ssb100-fc-write-s": (SSB100_INDEX, json_at("index.systems.fc.write_time_s", lambda v: f"{v:.1f}")),
    "run-ssb100-fc-ms": (SSB100, ssb100_column("fc")),
    "run-ssb100-vs-osp": (SSB100, match(r"speedup fc/osp\s+([\d.]+x)")),
    "run-ssb100-vs-isp": (SSB100, match(r"speedup fc/isp\s+([\d.]+x)")),
    "run-ssb100-vs-parabit": (SSB100, match(r"speedup fc/parabit\s+([\d.]+x)")),
    "ssb-unselective-rows": (SSB, ssb(None, "{:.0f}-{:.1f}", of=lambda r: 100 * number(r["rows selected"]) / 5997952,
                                      queries=("Q1.1", "Q3.1"))),
    "run-rel-rows": (SSB_RELIABILITY, json_at("tables.lineorder", lambda v: f"{v / 1e3:.0f} K")),
    "run-rel-reads": (SSB_RELIABILITY, json_at("reliability.slc_no_esp.reads")),
    "run-rel-cells": (SSB_RELIABILITY, json_at("reliability.slc_no_esp.cells_sensed", lambda v: f"{v:.1e}".replace("e+0", "e"))),
    "run-rel-exact": (SSB_RELIABILITY, json_at("reliability.slc_no_esp.exact")),
    "run-rel-rber": (SSB_RELIABILITY, json_at("reliability.slc_no_esp.rber_sensed", lambda v: f"{v:.1e}".replace("e-0", "e-"))),
    "run-rel-wrong": (SSB_RELIABILITY, json_at("reliability.slc_no_esp.wrong_filter_rows_per_query", lambda v: f"{v:.0f}")),
    "run-rel-wrong-all": (SSB_RELIABILITY, json_at("reliability.slc_no_esp.wrong_filter_rows", lambda v: f"{v:,}")),
    "run-rel-esp-exact": (SSB_RELIABILITY, json_at("reliability.esp.exact")),
    "run-rel-esp-wrong": (SSB_RELIABILITY, json_at("reliability.esp.wrong_filter_rows")),
    # docs/hbf.md: the stack's area by component, the sweeps' points, the measured streams and writes
    **{f"run-area-{k}": (HBF_AREA_CSI, how) for k, how in {
        "cells": match(r"cells ([\d.]+) \+ TSVs"), "array-tsv": match(r"cells [\d.]+ \+ TSVs ([\d.]+)"),
        "array": match(r"array\s+([\d.]+) mm2"), "buffers": match(r"page buffers ([\d.]+)"),
        "switches": match(r"word-line switches ([\d.]+)"), "plane-sram": match(r"plane SRAM ([\d.]+)"),
        "logic": match(r"megaplane logic ([\d.]+)"), "periphery": match(r"periphery ([\d.]+)"),
        "circuit-tsv": match(r"periphery [\d.]+ \+ TSVs ([\d.]+)"), "circuit": match(r"circuit\s+([\d.]+) mm2"),
        "die": match(r"die\s+([\d.]+) mm2\n"), "base-sram": match(r"SRAM ([\d.]+) \+ PHY"),
        "base": match(r"base die\s+([\d.]+) mm2 ="), "footprint": match(r"stack footprint ([\d.]+) mm2"),
        "density": match(r"GiB -> ([\d.]+) GiB/mm2\n  per"), "hbm-core": match(r"core die ([\d.]+) mm2"),
        "hbm-base": match(r"base die ([\d.]+) mm2 ->"), "hbm-density": match(r"GiB -> ([\d.]+) GiB/mm2\nHBF", fixed(3)),
        "cells-1": match(r"cells ([\d.]+) \+ TSVs", fixed(1)), "hbm-core-1": match(r"core die ([\d.]+) mm2", fixed(1)),
        "buffers-0": match(r"page buffers ([\d.]+)", fixed(0))}.items()},
    "run-area-crossover": (area_sweep("hbf.area.layers=256,258,260,262,264,266"),
                           lambda t: next(r.split()[0] for r in t.split("\n")[1:] if "circuit die" in r)),
    "run-area-beside-232": (area_sweep("hbf.area.layers=232,300", "hbf.area.periphery=beside"), lambda t: fixed(2)(area_row("232", "GiB/mm2")(t))),
    "run-area-beside-300": (area_sweep("hbf.area.layers=232,300", "hbf.area.periphery=beside"), lambda t: fixed(2)(area_row("300", "GiB/mm2")(t))),
    "run-area-m1-circuit": (area_sweep("hbf.geometry.planes_per_megaplane=1,2"), lambda t: fixed(1)(area_row("1", "circuit")(t))),
    "run-area-m1-area": (area_sweep("hbf.geometry.planes_per_megaplane=1,2"), lambda t: f"{number(area_row('1', 'area')(t)):.2f}x"),
    "run-area-sram-1mib": (area_sweep("hbf.sram.plane_sram=1MiB"), lambda t: fixed(1)(area_row("1MiB", "circuit")(t))),
    "run-area-planes-48": (area_sweep("hbf.geometry.planes_per_die=48,192", "hbf.geometry.planes_per_megaplane=16"),
                           area_row("48", "GiB/mm2")),
    "run-area-planes-192": (area_sweep("hbf.geometry.planes_per_die=48,192", "hbf.geometry.planes_per_megaplane=16"),
                            area_row("192", "GiB/mm2")),
    **{f"run-stream-{t}-{l}-{p}": (hbf_stream(t, l, p == "on"), match(r"= ([\d.]+) GB/s per stack"))
       for t, l, p in (("12MiB", "execution", "on"), ("12MiB", "declaration", "on"), ("12MiB", "execution", "off"),
                       ("12MiB", "declaration", "off"), ("1MiB", "execution", "on"), ("1MiB", "declaration", "on"),
                       ("1MiB", "declaration", "off"))},
    **{f"run-stream-{t}-{l}-{p}-pct": (hbf_stream(t, l, p == "on"), match(r"\(([\d.]+)% of the interface", fixed(1)))
       for t, l, p in (("12MiB", "execution", "on"), ("12MiB", "declaration", "on"), ("12MiB", "execution", "off"),
                       ("12MiB", "declaration", "off"), ("1MiB", "execution", "on"), ("1MiB", "declaration", "on"),
                       ("1MiB", "declaration", "off"))},
    **{f"run-stream-{t}-{l}-{p}-load": (hbf_stream(t, l, p == "on", json_out=True),
                                        json_at("tile_max_plane_load_mean", lambda v: f"{v:.2f}"))
       for t, l, p in (("12MiB", "execution", "on"), ("12MiB", "declaration", "on"), ("12MiB", "execution", "off"),
                       ("12MiB", "declaration", "off"), ("1MiB", "execution", "on"), ("1MiB", "declaration", "on"),
                       ("1MiB", "declaration", "off"))},
    **{f"run-stream-cost-{t}-{p}": (Runs(hbf_stream(t, "declaration", p == "on"), hbf_stream(t, "execution", p == "on")),
                                    change(match(r"= ([\d.]+) GB/s per stack"), "{:.1%}"))
       for t in ("12MiB", "1MiB") for p in ("on", "off")},
    "run-stream-events": (hbf_stream(), match(r"(\d+) events in", lambda s: f"{number(s) / 1e6:.2f} M")),
    "run-write-csi": (Run("hbf", "write-bw", "--preset", "csi"), match(r"s, ([\d.]+) GB/s \(")),
    "run-write-cli": (Run("hbf", "write-bw", "--preset", "cli"), match(r"s, ([\d.]+) GB/s \(", fixed(1))),
    "run-ablation-arrange-whole": (Run("accel", "run", "--model", "qwen3-235b", "--system", "csi", "--gpus", "8",
                                       "--context", "8110:2530", "--slo", "100", "--batch", "256", "--set",
                                       "serving.kv_arrange=whole"), match(r"GroupArrange copy to HBM ([\d.]+)", fixed(2))),
}


# ---------------------------------------------------------------- the check and the rewrite


def docs(root):
    return ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))


def source_text(root, source, cache, binary=None):
    """The text of a GENERATED block, of a section of a file written whole, or of what a Run's command printed."""
    if source not in cache:
        if isinstance(source, Runs):
            try:
                cache[source] = [source_text(root, r, cache, binary) for r in source.runs]
            except LookupError as e:
                cache[source] = e
        elif isinstance(source, Run):
            try:
                cache[source] = source.output(binary)
            except (LookupError, OSError) as e:
                cache[source] = LookupError(str(e))
        else:
            path, block = source
            text = open(os.path.join(root, path), encoding="utf-8").read()
            if path in WHOLE:
                m = re.search(r"^" + re.escape(block) + r"\n(.*?)(?=^#{1,2} |\Z)", text, re.S | re.M)
            else:
                m = re.search(r"<!-- GENERATED " + re.escape(block) + r": [^>]*-->\n(.*?)<!-- END GENERATED " +
                              re.escape(block) + r" -->", text, re.S)
            if not m:
                raise LookupError(f"{path} has no {'section' if path in WHOLE else 'GENERATED block'} '{block}'")
            cache[source] = m.group(1)
    if isinstance(cache[source], Exception):
        raise cache[source]
    return cache[source]


def where(source):
    return str(source) if isinstance(source, (Run, Runs)) else f"{source[0]} ({source[1]})"


def of_run(name):
    """Whether NAME is a figure of example runs (checked only with the program)."""
    return name in VALUES and isinstance(VALUES[name][0], (Run, Runs))


def expected(root, name, cache, binary=None):
    source, how = VALUES[name]
    try:
        return how(source_text(root, source, cache, binary)), None
    except Exception as e:  # a reader that finds no such figure (an output or table of another shape) is a problem
        return None, f"{name}: cannot read it from {where(source)}: {type(e).__name__}: {e}"


def marks(root):
    """(file, line number, name, value, (start, end) of the value in the file's text) of every mark, and the problems
    of malformed ones. A value may run over lines (a list of columns); a figure is one line."""
    found, bad = [], []
    for path in docs(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        fences = [m.start() for m in re.finditer(r"^\s*```", text, re.M)]
        ms = list(MARK.finditer(text))
        if len(re.findall(r"(?<!`)<!--v:", text)) != len(ms) or len(re.findall(r"<!--/v-->(?!`)", text)) != len(ms):
            bad.append(f"{path}: a mark without its end, or an end without its mark (<!--v:NAME-->value<!--/v-->)")
        for m in ms:
            n = text.count("\n", 0, m.start()) + 1
            if sum(1 for f in fences if f < m.start()) % 2:
                bad.append(f"{path}:{n}: a mark inside a code block (it would show)")
            if "<!--" in m.group(2):
                bad.append(f"{path}:{n}: a mark inside a mark")
            found.append((path, n, m.group(1), m.group(2), m.span(2)))
    return found, bad


def check(root=ROOT, binary=None):
    """Every problem, one line each (none: the docs agree with their sources)."""
    found, problems = marks(root)
    cache, headers, used = {}, {}, set()
    for path, n, name, value, _ in found:
        used.add(name)
        if name not in VALUES:
            problems.append(f"{path}:{n}: unknown value name '{name}' (register it in scripts/doc_values.py VALUES)")
            continue
        source, how = VALUES[name]
        if isinstance(how, Columns):
            if binary:
                if name not in headers:
                    try:
                        headers[name] = how.header(binary)
                    except (subprocess.SubprocessError, OSError) as e:
                        headers[name] = e
                if isinstance(headers[name], Exception):
                    problems.append(f"{path}:{n}: {name}: no CSV header from the program: {headers[name]}")
                    continue
                why = Columns.differ(value, headers[name])
                if why:
                    problems.append(f"{path}:{n}: {name}: the documented columns differ from the CSV's: {why}")
            continue
        if of_run(name) and not binary:
            continue
        want, err = expected(root, name, cache, binary)
        if err:
            problems.append(f"{path}:{n}: {err}")
        elif value != want:
            problems.append(f"{path}:{n}: {name} is '{value}' here but '{want}' in {where(source)}; "
                            f"`python3 scripts/doc_values.py write{' BITLINE' if of_run(name) else ''}` rewrites it")
    for name in sorted(set(VALUES) - used):
        problems.append(f"scripts/doc_values.py: '{name}' is registered but marked nowhere (remove it)")
    return problems


def write(root=ROOT, binary=None):
    """Rewrites every marked figure from its source (those of example runs only with the program); returns the
    problems left (check's)."""
    found, problems = marks(root)
    cache, edits = {}, {}
    for path, n, name, value, span in found:
        if name in VALUES and not isinstance(VALUES[name][1], Columns) and (binary or not of_run(name)):
            want, err = expected(root, name, cache, binary)
            if err:
                problems.append(f"{path}:{n}: {err}")
            elif want != value:
                edits.setdefault(path, []).append((span, want))
    for path, changes in edits.items():
        full = os.path.join(root, path)
        text = open(full, encoding="utf-8").read()
        for (a, b), want in sorted(changes, reverse=True):
            text = text[:a] + want + text[b:]
        open(full, "w", encoding="utf-8").write(text)
        print(f"doc_values: {len(changes)} figure(s) rewritten in {path}")
    return problems or check(root, binary)


def main():
    if len(sys.argv) in (2, 3) and sys.argv[1] in ("check", "write"):
        binary = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else None
        problems = (check if sys.argv[1] == "check" else write)(ROOT, binary)
    else:
        print(__doc__)
        return 2
    found = marks(ROOT)[0]
    runs = sum(1 for m in found if of_run(m[2]))
    for p in problems:
        print("  " + p)
    print(f"doc_values: {len(found)} marked figures ({runs} of example runs, "
          f"{'read from their commands' if binary else 'not checked without BITLINE'}), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
