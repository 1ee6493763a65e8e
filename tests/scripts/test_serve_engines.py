"""The serving engines against SGLang's published runs of SGLang v0.3.0 and vLLM v0.6.0 (scripts/serve_engines.py,
docs/serving.md "Engines against published benchmark runs"), run on the built program (BITLINE_BINARY).

Issue 53's targets (a median |deviation| of 10% over E2E, TPOT, ITL and throughput, 20% over TTFT, no row beyond 35%)
are not met: the misses are pinned at the model's values within narrow bands, so that a change of the engines, the
kernels or the workload that moves them fails here until the docs' table (make validate) and this pin say where they
went. The shape the model does get right is asserted as such: vLLM's 10-step groups make its ITL about ten TPOTs,
SGLang streams every step, and every setting serves its published load.
"""
import importlib.util
import os
import statistics

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "serve_engines.py")
BITLINE = os.environ.get("BITLINE_BINARY", "")


def load():
    spec = importlib.util.spec_from_file_location("serve_engines", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def runs():
    if not os.path.isfile(BITLINE):
        pytest.fail(f"BITLINE_BINARY is not the built program: {BITLINE!r}")
    se = load()
    rows = se.collect(BITLINE)
    return se, rows, se.summarise(rows)


def test_every_published_value_has_its_row(runs):
    se, rows, _ = runs
    expected = sum(len(values) for *_, published in se.PUBLISHED for values in published.values())
    assert len(rows) == expected == 36
    assert all(r["bitline"] > 0 for r in rows)


def test_the_medians_are_pinned_where_the_model_is(runs):
    # 2026-12-07: 12.6% and 32.1% (docs/serving.md); one point either way
    _, _, s = runs
    assert 0.116 <= s["median_abs_deviation_e2e_tpot_itl_throughput"] <= 0.136
    assert 0.311 <= s["median_abs_deviation_ttft"] <= 0.331
    assert not s["meets_median_target"] and not s["meets_ttft_target"]
    # the largest miss: vLLM's TTFT on 70B at 8 req/s, -39.0%
    assert 0.38 <= s["max_abs_deviation"] <= 0.40
    assert s["rows_beyond_max_target"] == 2


def test_multi_step_makes_the_itl_about_ten_tpots_and_sglang_streams_every_step(runs):
    _, rows, _ = runs
    by = {(r["setting"], r["engine"], r["metric"]): r["bitline"] for r in rows}
    settings = {r["setting"] for r in rows if r["metric"] == "itl"}
    assert len(settings) == 4
    for setting in settings:
        assert 8.5 <= by[(setting, "vLLM", "itl")] / by[(setting, "vLLM", "tpot")] <= 10.0, setting
        assert by[(setting, "SGLang", "itl")] <= by[(setting, "SGLang", "tpot")], setting


def test_ttft_is_short_in_every_row(runs):
    # the gap the docs explain (the API server and streaming path, v0.3.0's and v0.6.0's frontends): every TTFT row
    # 25-45% below the published one
    _, rows, _ = runs
    ttft = [r["deviation"] for r in rows if r["metric"] == "ttft"]
    assert len(ttft) == 8
    assert all(-0.45 <= d <= -0.25 for d in ttft), ttft
    assert -0.35 <= statistics.median(ttft) <= -0.30
