"""scripts/plot.py on valid and hostile inputs (issue 51, class 4): every refusal exits 2 with one line naming the file,
the key path, the value and the reason, and leaves no output; every valid result of each kind draws a PNG, with the
papers' published figures beside bitline's where they exist and no legend over a bar, line or label (issue 56; the
chart scripts of docs/figures too).

Run by ctest (Scripts.PlotPy) as `/usr/bin/python3 -m pytest tests/scripts`: Debian's interpreter, which sees
python3-matplotlib and python3-pytest. The inputs are tests/scripts/data/ (small real results, configs dropped) and
variants of them made here; the C++ binary is not needed. Most cases call plot.py's main() in this process (a
matplotlib start per case would take ~30 s in all); run_process() checks the real exit status of a few.
"""
import contextlib
import errno
import io
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts")
PLOT = os.path.join(SCRIPTS, "plot.py")
DATA = os.path.join(HERE, "data")
KINDS = sorted(f[:-len(".json")] for f in os.listdir(DATA) if f.endswith(".json"))
sys.path.insert(0, SCRIPTS)
import plot  # noqa: E402


def run(*args):
    """plot.py's main() with these arguments, in this process: its exit status and stderr (an uncaught exception
    fails the test)."""
    argv, sys.argv = sys.argv, ["plot.py", *map(str, args)]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            plot.main()
        code = 0
    except SystemExit as e:
        code = e.code
    finally:
        sys.argv = argv
    return subprocess.CompletedProcess(args, code, "", err.getvalue())


def run_process(*args):
    return subprocess.run([sys.executable, PLOT, *map(str, args)], capture_output=True, text=True, timeout=300)


def fixture(kind):
    with open(os.path.join(DATA, f"{kind}.json")) as f:
        return json.load(f)


def write(path, content):
    """`content` to `path`: text as is, anything else as JSON."""
    with open(path, "w") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return path


def pngs(folder):
    """The PNGs (and plot.py's temporaries) in `folder`."""
    return sorted(f for f in os.listdir(folder) if f.endswith(".png"))


def assert_refused(r, folder, *words):
    """Exit 2, one `plot.py: ` line on stderr holding every word, and no PNG or temporary left in `folder`."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("plot.py: "), r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in lines[-1], (w, lines[-1])
    assert pngs(folder) == [], pngs(folder)


def edit(j, path, value=KeyError):
    """Sets (or, for KeyError, deletes) the value at `path`, e.g. `points[2].time_s`; returns j."""
    steps = [int(s) if s.isdigit() else s for s in re.findall(r"[^.\[\]]+", path)]
    node = j
    for s in steps[:-1]:
        node = node[s]
    if value is KeyError:
        del node[steps[-1]]
    else:
        node[steps[-1]] = value
    return j


def draw_variant(tmp_path, kind, path, value=KeyError):
    src = write(tmp_path / "r.json", edit(fixture(kind), path, value))
    return run(src, tmp_path / "r.png")


# ---- every kind draws ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_draws_a_png(tmp_path, kind):
    src = write(tmp_path / "r.json", fixture(kind))
    r = run(src, tmp_path / "r.png")
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / "r.png") > 1000
    assert pngs(tmp_path) == ["r.png"]  # no temporary left beside it


def test_the_same_input_draws_the_same_bytes_and_the_default_output_is_beside_it(tmp_path):
    src = write(tmp_path / "r.json", fixture("accel-sweep"))
    r = run_process(src)
    assert r.returncode == 0, r.stderr
    first = (tmp_path / "r.png").read_bytes()
    assert run(src, tmp_path / "again.png").returncode == 0
    assert (tmp_path / "again.png").read_bytes() == first


def test_usage_and_refusals_exit_2_as_a_process(tmp_path):
    r = run_process()
    assert r.returncode == 2 and r.stderr.startswith("plot.py: usage: "), r.stderr
    assert_refused(run_process(write(tmp_path / "r.json", '{"points": []}'), tmp_path / "r.png"), tmp_path,
                   "r.json: not a bitline result")
    deep = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    assert_refused(run_process(deep, tmp_path / "r.png"), tmp_path, "deep.json: JSON nested deeper than 32")


def test_a_ten_thousand_point_sweep_draws(tmp_path):
    j = fixture("accel-sweep")
    template = j["points"][0]
    j["vary"] = {"nand.timing.t_read_slc": [f"{i}ns" for i in range(1, 10001)]}
    j["points"] = [dict(template, values={"nand.timing.t_read_slc": f"{i}ns"}, tokens_per_s_per_gpu=1000.0 + i % 97)
                   for i in range(1, 10001)]
    r = run(write(tmp_path / "r.json", j), tmp_path / "r.png")
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / "r.png") > 1000


def test_a_tie_between_load_shapes_draws_the_same_bytes_in_every_process(tmp_path):
    """The hit-rate chart's line is the most common load shape; on a tie, the first load's (a set's order varied with
    the process's string hashing)."""
    j = fixture("accel-sessions")
    j["loads"] = j["loads"][:2] + [dict(load, offered=dict(load["offered"], think_time_s=99.0)) for load in j["loads"][:2]]
    src = write(tmp_path / "r.json", j)
    env = dict(os.environ)
    for seed in ("1", "10"):  # the old order differed between these two
        env["PYTHONHASHSEED"] = seed
        r = subprocess.run([sys.executable, PLOT, src, tmp_path / f"{seed}.png"], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "1.png").read_bytes() == (tmp_path / "10.png").read_bytes()


@pytest.mark.parametrize("kind,name", [("serve-run", "serve-run"), ("serve-run-disaggregated", "serve-run"),
                                       ("serve-capacity", "serve-capacity"), ("serve-sweep", "serve-sweep"),
                                       ("serve-sweep-concurrency", "serve-sweep"),
                                       ("serve-capacity-experiment", "serve-capacity-experiment")])
def test_each_serve_result_is_recognised(kind, name):
    assert plot.kind_of(fixture(kind)) == name


def test_a_batch1_run_draws_the_measured_latency_beside_bitlines():
    """A closed loop of one user on h100x1, llama2-7b fp16, 128 in / 20 out: NeMo's measured batch-1 latency
    (scripts/paper_figures.json) is drawn beside the E2E percentiles; an open-loop run has nothing to compare."""
    import plot_serve
    assert plot_serve.measured(fixture("serve-run-batch1")) == [("e2e_ms", 153.8, "measured, NeMo (batch 1)")]
    assert plot_serve.measured(fixture("serve-run")) == []
    j = fixture("serve-run-batch1")
    j["config"]["llm"]["precision"] = "fp8"  # not the precision measured
    assert plot_serve.measured(j) == []


def test_a_malformed_serve_result_exits_2_as_a_process_naming_the_field(tmp_path):
    j = fixture("serve-run")
    del j["summary"]["tpot_ms"]
    assert_refused(run_process(write(tmp_path / "r.json", j), tmp_path / "r.png"), tmp_path,
                   "r.json: summary.tpot_ms: missing")
    j = fixture("serve-capacity")
    j["probes"][1]["p90_ttft_ms"] = "slow"
    assert_refused(run_process(write(tmp_path / "c.json", j), tmp_path / "r.png"), tmp_path,
                   'c.json: probes[1].p90_ttft_ms: "slow": not a number')


def test_a_serve_run_of_zeros_draws(tmp_path):
    """Output 1 token: TPOT and ITL are 0 at every percentile; queueing 0 (a log axis would have no room for them)."""
    j = fixture("serve-run")
    for metric in ("tpot_ms", "itl_ms", "queueing_ms"):
        j["summary"][metric] = {q: 0.0 for q in j["summary"][metric]}
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0


def test_too_many_probes_or_instances_are_refused(tmp_path):
    j = fixture("serve-capacity")
    j["probes"] = j["probes"][:1] * 257
    assert_refused(run(write(tmp_path / "r.json", j), tmp_path / "r.png"), tmp_path, "probes: a list of 257: more than 256")
    j = fixture("serve-run")
    j["summary"]["instances"] = j["summary"]["instances"][:1] * 65
    assert_refused(run(write(tmp_path / "r.json", j), tmp_path / "r.png"), tmp_path,
                   "summary.instances: a list of 65: more than 64")


def test_a_sweep_of_many_long_values_draws(tmp_path):
    """60 values of 12 characters: the labels are turned on end (they overlapped), the legend beside the panel."""
    j = fixture("accel-sweep")
    template = j["points"][0]
    j["vary"] = {"k": [f"value-{i:06d}" for i in range(60)], "b": ["1", "2"]}
    j["points"] = [dict(template, values={"k": f"value-{i:06d}", "b": b}, tokens_per_s_per_gpu=1000.0 + i)
                   for i in range(60) for b in ("1", "2")]
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0


def test_a_write_bw_without_the_other_scheme_draws(tmp_path):
    j = fixture("cosmos-write-bw")
    for mode in j["modes"].values():
        mode.pop("one_shot_gb_per_s", None)
        mode.pop("page_by_page_gb_per_s", None)
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0


# ---- the papers' figures beside bitline's; legends that cover nothing ------------------------------------------

PAPER = json.load(open(os.path.join(SCRIPTS, "paper_figures.json")))


@pytest.fixture
def drawn(monkeypatch):
    """The figures plot.py (or a chart script) saves from here on, kept as they are written."""
    import matplotlib.figure
    figures, savefig = [], matplotlib.figure.Figure.savefig

    def keep(fig, *args, **kw):
        figures.append(fig)
        return savefig(fig, *args, **kw)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    return figures


def bars_at_ticks(ax, prefix):
    """{x tick label: bar height} of the bars of `ax` whose series label starts with `prefix`."""
    ticks = list(zip(ax.get_xticks(), (t.get_text() for t in ax.get_xticklabels())))
    out = {}
    for series in (c for c in ax.containers if c.get_label().startswith(prefix)):
        for bar in series:
            x = bar.get_x() + bar.get_width() / 2
            out[min(ticks, key=lambda t: abs(t[0] - x))[1]] = bar.get_height()
    return out


def panels_with(fig, prefix):
    return [ax for ax in fig.axes if any(c.get_label().startswith(prefix) for c in ax.containers)]


def covered(fig):
    """What a legend of `fig` lies over: the bars, lines, markers and labels inside any panel, as drawn."""
    from matplotlib.transforms import Bbox
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    found = []
    for box in (legend.get_window_extent(renderer) for legend in legends):
        for ax in fig.axes:
            inside = Bbox.intersection(box, ax.bbox)  # a legend beside or below a panel covers nothing of it
            if inside is None or inside.width < 1 or inside.height < 1:
                continue
            for bar in ax.patches:
                shown = Bbox.intersection(bar.get_window_extent(renderer), ax.bbox)
                if bar.get_visible() and shown is not None and shown.width * shown.height > 1 and inside.overlaps(shown):
                    found.append(f"a bar at x={bar.get_x():g} of {ax.get_title()!r}")
            for line in ax.lines:
                path = line.get_transform().transform_path(line.get_path())
                if len(path.vertices) and (path.intersects_bbox(inside, filled=False) or inside.count_contains(path.vertices)):
                    found.append(f"the line {line.get_label()!r} of {ax.get_title()!r}")
            for text in ax.texts:
                if text.get_text() and inside.overlaps(text.get_window_extent(renderer)):
                    found.append(f"the label {text.get_text()!r} of {ax.get_title()!r}")
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_no_legend_covers_a_bar_line_or_label(tmp_path, drawn, kind):
    assert run(write(tmp_path / "r.json", fixture(kind)), tmp_path / "r.png").returncode == 0
    assert drawn and covered(drawn[-1]) == []


def cosmos_eval_with_every_average():
    """The fixture with bitline's averages of every pair the paper reports, both metrics."""
    j = fixture("cosmos-eval")
    j["summary"]["speedup"]["fc/isp"] = {"overall": 7.5}
    j["summary"]["energy_efficiency"] = {pair: {"overall": v} for pair, v in
                                         (("fc/osp", 90.0), ("fc/isp", 9.5), ("fc/parabit", 3.6))}
    return j


def test_a_cosmos_eval_draws_every_average_the_paper_published_beside_bitlines(tmp_path, drawn):
    """Speedup of FC over OSP, ISP and ParaBit, energy efficiency over OSP and ParaBit (the paper gives none over ISP):
    each a bar at its system beside bitline's summary average (docs/validation.md's mean), a row per metric."""
    j = cosmos_eval_with_every_average()
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0
    names = {"fc/osp": "OSP", "fc/isp": "ISP", "fc/parabit": "ParaBit"}
    rows = panels_with(drawn[-1], "paper")
    assert len(rows) == 2
    for ax, metric in zip(rows, ("speedup", "energy_efficiency")):
        assert bars_at_ticks(ax, "paper") == {names[p]: v for p, v in PAPER["flash_cosmos"][metric].items()}
        assert bars_at_ticks(ax, "bitline") == {names[p]: v["overall"] for p, v in j["summary"][metric].items()}
    assert "none published" in [t.get_text() for t in rows[1].texts]  # energy efficiency over ISP
    # Without the points' energy, speedup alone.
    for p in j["points"]:
        del p["energy_j"]
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0
    assert len(panels_with(drawn[-1], "paper")) == 1


def test_the_cosmos_charts_draw_the_papers_averages_and_no_legend_covers_anything(tmp_path, drawn, monkeypatch):
    """scripts/plot_cosmos.py (docs/figures): the headline and both per-point charts carry every published average
    bitline has a figure for, the write chart the ESP figure; no legend lies over a bar or a label."""
    import plot_cosmos
    j = cosmos_eval_with_every_average()
    monkeypatch.setattr(sys, "argv", ["plot_cosmos.py", write(tmp_path / "e.json", j),
                                      write(tmp_path / "w.json", fixture("cosmos-write-bw")), tmp_path])
    with contextlib.redirect_stdout(io.StringIO()):
        plot_cosmos.main()
    headline, speedup, energy, write_bw = drawn
    published = [v for metric in ("speedup", "energy_efficiency") for v in PAPER["flash_cosmos"][metric].values()]
    assert sorted(bars_at_ticks(headline.axes[0], "paper").values()) == sorted(published)
    assert sorted(bars_at_ticks(panels_with(speedup, "paper")[0], "paper").values()) == sorted(
        PAPER["flash_cosmos"]["speedup"].values())
    assert sorted(bars_at_ticks(panels_with(energy, "paper")[0], "paper").values()) == sorted(
        PAPER["flash_cosmos"]["energy_efficiency"].values())
    assert any(f"{PAPER['flash_cosmos']['esp_write_gb_per_s']:g} GB/s" in line.get_label() for line in write_bw.axes[0].lines)
    for fig in drawn:
        assert covered(fig) == []


def accel_eval_with_the_llama_point():
    """The fixture's Llama-3.1-405B points moved to the paper's agentic context, 8 x CSI's bandwidth bound added."""
    j = fixture("accel-eval")
    at = PAPER["flashaccel"]["llama_agent_point"]
    for p in j["points"]:
        if p["model"] == at["model"]:
            p["context"] = at["context"]
            if p["system"] == "csix8" and p["slo_ms"] == at["slo_ms"]:
                p["bandwidth_bound_batch"] = p["batch"] + 20
    return j


def test_an_accel_eval_draws_the_papers_llama_batches_beside_bitlines(tmp_path, drawn):
    """FlashAccel's Llama-3.1-405B at 15K/6K, 50 ms: its 30 on 8 x H200 beside bitline's batch, its ~110 on 8 x CSI
    beside bitline's bandwidth bound (as docs/validation.md), bitline's whole-step batch on its own; no panel where
    the eval does not hold that point."""
    j = accel_eval_with_the_llama_point()
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0
    [ax] = panels_with(drawn[-1], "paper")
    fa, at = PAPER["flashaccel"], PAPER["flashaccel"]["llama_agent_point"]
    point = {p["system"]: p for p in j["points"] if (p["model"], p["context"], p["slo_ms"]) ==
             (at["model"], at["context"], at["slo_ms"])}
    assert bars_at_ticks(ax, "paper") == {"8xH200\nbatch": fa["llama_agent_h200x8_batch"],
                                          "8xCSI\nbandwidth\nbound": fa["llama_agent_csix8_batch_at_50ms"]}
    assert bars_at_ticks(ax, "bitline") == {"8xH200\nbatch": point["h200x8"]["batch"],
                                            "8xCSI\nbandwidth\nbound": point["csix8"]["bandwidth_bound_batch"],
                                            "8xCSI\nbatch": point["csix8"]["batch"]}
    assert covered(drawn[-1]) == []
    assert run(write(tmp_path / "r.json", fixture("accel-eval")), tmp_path / "r.png").returncode == 0
    assert panels_with(drawn[-1], "paper") == []  # the fixture's Llama points are of another context


def test_the_accel_charts_keep_their_legends_off_bars_lines_and_markers(tmp_path, drawn, monkeypatch):
    """scripts/plot_accel.py (docs/figures): the hit-rate legend covered a line and a marker, the energy legend the
    last system's bars; the throughput chart carries the paper's 2.49x and Llama batches."""
    import plot_accel
    srcs = [write(tmp_path / f"{k}.json", j) for k, j in (("e", accel_eval_with_the_llama_point()),
                                                          ("a", fixture("accel-ablation")), ("s", fixture("accel-sessions")))]
    monkeypatch.setattr(sys, "argv", ["plot_accel.py", *srcs, tmp_path])
    with contextlib.redirect_stdout(io.StringIO()):
        plot_accel.main()
    assert len(drawn) == 4
    throughput = drawn[0]
    labels = [line.get_label() for ax in throughput.axes for line in ax.lines]
    assert any(f"paper: 8xCSI mean {PAPER['flashaccel']['csix8_vs_h200x8_at_100ms']:g}x" in label for label in labels)
    assert len(panels_with(throughput, "paper")) == 1
    for fig in drawn:
        assert covered(fig) == []


def test_a_layer_sweep_marks_the_papers_hbf_stack(tmp_path, drawn):
    """hbf area --vary hbf.area.layers=...,96,...: the paper's 149 mm^2 at 96 layers on the footprint panel, its
    density (the stack's capacity over 149 mm^2) on the other; no mark where 96 layers is not swept."""
    j = fixture("hbf-area")
    for p in j["points"]:
        p["area"]["hbf_stack"]["capacity_bytes"] = 192 << 30
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0
    paper = PAPER["hbf_area"]
    marks = [[(ax.get_xticklabels()[int(x)].get_text(), y) for line in ax.lines if line.get_label().startswith("HBF stack, paper")
              for x, y in zip(line.get_xdata(), line.get_ydata())] for ax in drawn[-1].axes[:2]]
    assert marks == [[(str(paper["layers"]), paper["hbf_stack_mm2"])], [(str(paper["layers"]), 192 / paper["hbf_stack_mm2"])]]
    for p in j["points"]:
        p["values"]["hbf.area.layers"] = {"96": "64"}.get(p["values"]["hbf.area.layers"], p["values"]["hbf.area.layers"])
    j["vary"]["hbf.area.layers"] = ["64", "232"]
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0
    assert not any("paper" in line.get_label() for ax in drawn[-1].axes for line in ax.lines)


def test_crowded_sweep_labels_are_turned_on_end(tmp_path, drawn):
    """Twelve layer counts in a panel narrowed by the legend beside it overlapped ("64 96128160..."): as laid out,
    overlapping x labels are turned on end and then none overlaps."""
    j = fixture("hbf-area")
    template = j["points"][0]
    layers = ["64", "96", "128", "160", "176", "200", "232", "262", "300", "350", "400", "512"]
    j["vary"] = {"hbf.area.layers": layers, "hbf.area.periphery": ["bonded", "beside"]}
    j["points"] = [dict(template, values={"hbf.area.layers": n, "hbf.area.periphery": k}) for n in layers
                   for k in ("bonded", "beside")]
    assert run(write(tmp_path / "r.json", j), tmp_path / "r.png").returncode == 0
    fig = drawn[-1]
    fig.canvas.draw()
    for ax in fig.axes:
        boxes = sorted((t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()), key=lambda b: b.x0)
        assert not any(a.x1 > b.x0 for a, b in zip(boxes, boxes[1:])), [t.get_text() for t in ax.get_xticklabels()]
    assert {t.get_rotation() for t in fig.axes[0].get_xticklabels()} == {90}


# ---- fields: missing, mistyped, zero, NaN, negative, out of range ----------------------------------------------


@pytest.mark.parametrize("kind,path,value,words", [
    ("cosmos-eval", "points[2].time_s", KeyError, ["points[2].time_s: missing"]),
    ("accel-eval", "points[1].tokens_per_s_per_gpu", "fast", ['points[1].tokens_per_s_per_gpu: "fast": not a number']),
    ("cosmos-ssb", "queries[0].systems.fc.time_s", 0, ["queries[0].systems.fc.time_s: 0: below 1e-12"]),
    ("cosmos-eval", "points[0].time_s", 0.0, ["points[0].time_s: 0.0: below 1e-12"]),
    ("serve-sweep", "points[1].summary.ttft_ms.p50", -3.5, ["points[1].summary.ttft_ms.p50: -3.5: below 0"]),
    ("serve-sweep-concurrency", "points[1].concurrency", 0, ["points[1].concurrency: 0"]),
    ("accel-sessions", "loads[0].systems.csix8.hit_rate", 1.5, ["loads[0].systems.csix8.hit_rate: 1.5: above 1"]),
    ("cosmos-write-bw", "modes.esp.gb_per_s", None, ["modes.esp.gb_per_s: null: not a number"]),
    ("accel-ablation", "variants", {}, ["variants: an object of 0 key(s): at least 1"]),
    ("accel-ablation", "gpus", 8.5, ["gpus: 8.5: not an integer"]),
    ("accel-sweep", "points[0].values", [1], ["points[0].values: a list of 1: not an object"]),
    ("accel-sweep", "slo_ms", "20", ['slo_ms: "20": not a number']),
    ("hbf-area", "points[0].area.hbf_stack.footprint_mm2", 1e16, ["footprint_mm2: 1e+16: past +-1e+15"]),
    ("serve-sweep", "points[0].cdf.ttft_ms", [1.0, 2.0], ["points[0].cdf.ttft_ms: a list of 2: not the 101 quantiles"]),
    ("accel-eval", "points[0].model", "a$b$", ['points[0].model: "a$b$": holds `$`']),
    ("accel-eval", "points[0].feasible", 1, ["points[0].feasible: 1: not true or false"]),
    ("accel-eval", "points[0].batch", 2.5, ["points[0].batch: 2.5: not an integer"]),
    ("accel-eval", "points[0].bandwidth_bound_batch", -3, ["points[0].bandwidth_bound_batch: -3: below 0"]),
    ("cosmos-eval", "summary.speedup.fc/osp.overall", 0, ["summary.speedup.fc/osp.overall: 0: below 1e-12"]),
    ("cosmos-eval", "summary.speedup.fc/parabit", {"bmi": 2.0}, ["summary.speedup.fc/parabit.overall: missing"]),
    ("cosmos-eval", "points[3].energy_j", "1 J", ['points[3].energy_j: "1 J": not a number']),
    ("hbf-area", "points[1].area.hbf_stack.capacity_bytes", [1], ["capacity_bytes: a list of 1: not a number"]),
    ("accel-sessions", "systems", {}, ["systems: an object of 0 key(s): at least 1"]),
    ("serve-run", "summary.ttft_ms.p90", KeyError, ["summary.ttft_ms.p90: missing"]),
    ("serve-run", "summary.output_tokens_per_s", "fast", ['summary.output_tokens_per_s: "fast": not a number']),
    ("serve-run", "summary.slo_attainment", 1.5, ["summary.slo_attainment: 1.5: above 1"]),
    ("serve-run", "summary.e2e_ms", [1], ["summary.e2e_ms: a list of 1: not an object"]),
    ("serve-run-disaggregated", "summary.instances[1].role", 3, ["summary.instances[1].role: 3: not a string"]),
    ("serve-run-disaggregated", "summary.kv_transfer.mean_ms", -1, ["summary.kv_transfer.mean_ms: -1: below 0"]),
    ("serve-capacity", "probes[2].meets", "yes", ['probes[2].meets: "yes": not true or false']),
    ("serve-capacity", "probes[0].rate_per_s", 0, ["probes[0].rate_per_s: 0: below 1e-12"]),
    ("serve-capacity", "slo.p90_ttft_ms", KeyError, ["slo.p90_ttft_ms: missing"]),
    ("serve-capacity", "probes", [], ["probes: a list of 0: at least 1"]),
    ("serve-capacity-experiment", "points[0].capacity_requests_per_s", -1, ["capacity_requests_per_s: -1: below 0"]),
    ("serve-capacity-experiment", "points[1].system", None, ["points[1].system: null: not a string"]),
])
def test_a_bad_field_is_named_with_its_value_and_reason(tmp_path, kind, path, value, words):
    assert_refused(draw_variant(tmp_path, kind, path, value), tmp_path, "r.json: ", *words)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_are_refused(tmp_path, literal):
    text = json.dumps(fixture("cosmos-ssb")).replace('"time_s": ', f'"time_s": {literal}, "x": ', 1)
    r = run(write(tmp_path / "r.json", text), tmp_path / "r.png")
    assert_refused(r, tmp_path, "r.json: ", literal.lstrip("-"))


def test_a_key_twice_is_refused(tmp_path):
    text = json.dumps(fixture("cosmos-write-bw")).replace('"modes": ', '"modes": {}, "modes": ', 1)
    assert_refused(run(write(tmp_path / "r.json", text), tmp_path / "r.png"), tmp_path, "r.json: ", '"modes" appears twice')


@pytest.mark.parametrize("depth", [33, 10_000])
def test_deep_nesting_is_refused(tmp_path, depth):
    text = '{"points": ' + "[" * depth + "]" * depth + ', "summary": {}}'
    assert_refused(run(write(tmp_path / "r.json", text), tmp_path / "r.png"), tmp_path, "r.json: ", "deeper than 32")


@pytest.mark.parametrize("text,words", [
    ('{"points": [], "summary": {}', ["not JSON"]),
    ('{"points": []}', ["not a bitline result", "points"]),
    ("[1, 2]", ["not a bitline result", "list"]),
    ("", ["not JSON"]),
])
def test_malformed_or_unknown_json_is_refused(tmp_path, text, words):
    assert_refused(run(write(tmp_path / "r.json", text), tmp_path / "r.png"), tmp_path, "r.json: ", *words)


def test_bytes_that_are_not_utf8_are_refused(tmp_path):
    (tmp_path / "r.json").write_bytes(b'{"gb_per_s": "\xff"}')
    assert_refused(run(tmp_path / "r.json", tmp_path / "r.png"), tmp_path, "r.json: not UTF-8")


# ---- the work budget -------------------------------------------------------------------------------------------


def test_too_many_points_are_refused(tmp_path):
    j = fixture("accel-sweep")
    j["points"] = [dict(j["points"][0], values={"hbf.stacks": str(i)}) for i in range(10_001)]
    j["vary"] = {"hbf.stacks": [str(i) for i in range(10_001)]}
    assert_refused(run(write(tmp_path / "r.json", j), tmp_path / "r.png"), tmp_path,
                   "points: a list of 10001: more than 10,000 item(s)")


def test_too_many_lines_are_refused(tmp_path):
    j = fixture("accel-sweep")
    j["vary"] = {"a": ["1"], "b": [str(i) for i in range(65)]}
    j["points"] = [dict(j["points"][0], values={"a": "1", "b": str(i)}) for i in range(65)]
    assert_refused(run(write(tmp_path / "r.json", j), tmp_path / "r.png"), tmp_path, "65 lines", "more than 64")


def test_too_many_rates_are_refused(tmp_path):
    j = fixture("serve-sweep")
    j["points"] = j["points"][:1] * 257
    assert_refused(run(write(tmp_path / "r.json", j), tmp_path / "r.png"), tmp_path, "points: a list of 257: more than 256")


def test_a_file_past_the_size_cap_is_refused_unread(tmp_path):
    with open(tmp_path / "r.json", "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: nothing is written
    assert_refused(run(tmp_path / "r.json", tmp_path / "r.png"), tmp_path, "r.json: 67,108,865 bytes, more than")


# ---- the input path --------------------------------------------------------------------------------------------


def test_dev_zero_is_refused(tmp_path):
    assert_refused(run("/dev/zero", tmp_path / "r.png"), tmp_path, "plot.py: /dev/zero: not a regular file")


def test_a_directory_input_is_refused(tmp_path):
    assert_refused(run(tmp_path, tmp_path / "r.png"), tmp_path, f"plot.py: {tmp_path}: not a regular file")


def test_a_pipe_input_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    assert_refused(run(tmp_path / "pipe.json", tmp_path / "r.png"), tmp_path, "pipe.json: not a regular file")


def test_a_missing_input_is_refused(tmp_path):
    assert_refused(run(tmp_path / "none.json", tmp_path / "r.png"), tmp_path, "none.json: cannot open it")


# ---- the output path -------------------------------------------------------------------------------------------


@pytest.fixture
def result(tmp_path):
    return write(tmp_path / "r.json", fixture("cosmos-write-bw"))


def test_a_missing_output_folder_is_named(tmp_path, result):
    missing = os.path.join(os.path.realpath(tmp_path), "nope")
    assert_refused(run(result, tmp_path / "nope" / "r.png"), tmp_path, f"folder {missing} does not exist")
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("out", ["/dev/full", "/tmp", "r.json", "r.jpg", "r", "r.png.tmp"])
def test_an_output_not_ending_in_png_is_refused(tmp_path, monkeypatch, result, out):
    monkeypatch.chdir(tmp_path)  # where a relative output would go
    before = result.read_bytes()
    assert_refused(run(result, out), tmp_path, f"r.json: {out}: the output must end in .png")
    assert result.read_bytes() == before


def test_an_output_that_is_a_directory_is_refused(tmp_path, result):
    os.mkdir(tmp_path / "d.png")
    r = run(result, tmp_path / "d.png")
    assert r.returncode == 2 and "is a directory" in r.stderr, r.stderr
    assert os.listdir(tmp_path / "d.png") == []


def test_an_output_that_is_a_pipe_is_refused(tmp_path, result):
    os.mkfifo(tmp_path / "p.png")
    r = run(result, tmp_path / "p.png")
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_the_input_as_the_output_is_refused(tmp_path, monkeypatch, spelling):
    src = write(tmp_path / "r.png", fixture("cosmos-write-bw"))  # a result named .png
    before = src.read_bytes()
    monkeypatch.chdir(tmp_path)
    out = {"same": "r.png", "dot": "./r.png", "symlink": "link.png", "hardlink": "hard.png"}[spelling]
    if spelling == "symlink":
        os.symlink("r.png", "link.png")
    if spelling == "hardlink":
        os.link("r.png", "hard.png")
    r = run("r.png", out)
    assert r.returncode == 2 and "the output is the input itself" in r.stderr, r.stderr
    assert src.read_bytes() == before


def test_an_output_link_is_written_through(tmp_path, result):
    os.symlink("target.png", tmp_path / "link.png")
    assert run(result, tmp_path / "link.png").returncode == 0
    assert os.path.islink(tmp_path / "link.png") and os.path.getsize(tmp_path / "target.png") > 1000


def test_an_unwritable_folder_is_refused(tmp_path, result):
    # A folder its mode keeps from anyone but root, and one nobody may create a file in (sysfs), so that the case is
    # tried whoever runs the tests.
    os.mkdir(tmp_path / "ro")
    os.chmod(tmp_path / "ro", 0o555)
    try:
        if os.geteuid() != 0:
            assert_refused(run(result, tmp_path / "ro" / "r.png"), tmp_path / "ro", "is not writable")
    finally:
        os.chmod(tmp_path / "ro", 0o755)
    r = run(result, "/sys/r.png")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("plot.py: "), r.stderr
    assert "/sys/r.png" in r.stderr and not os.path.exists("/sys/r.png"), r.stderr


# ---- failures while drawing (injected) -------------------------------------------------------------------------


def test_a_full_disk_leaves_no_partial_png_and_keeps_the_old_one(tmp_path, monkeypatch, result):
    import matplotlib.figure

    def partial_then_full(fig, path, **kw):
        with open(path, "wb") as f:
            f.write(b"\x89PNG half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", partial_then_full)
    (tmp_path / "r.png").write_bytes(b"old chart")
    r = run(result, tmp_path / "r.png")
    assert r.returncode == 2 and "r.json: cannot write" in r.stderr and "No space left" in r.stderr, r.stderr
    assert pngs(tmp_path) == ["r.png"] and (tmp_path / "r.png").read_bytes() == b"old chart"


def test_an_unexpected_error_while_drawing_exits_2_naming_the_file(tmp_path, monkeypatch, result):
    def broken(j, out):
        open(out, "wb").write(b"partial")
        raise ZeroDivisionError("a check missed something")
    monkeypatch.setitem(plot.KINDS, "write-bw", (plot.check_write_bw, broken))
    assert_refused(run(result, tmp_path / "r.png"), tmp_path, "r.json: cannot draw it (ZeroDivisionError: a check missed")
