"""The Python module against the command line (docs/python.md): the same results, the same errors, threads.

Run by ctest (Python.Module) with BITLINE_PYTHONPATH (build/PRESET/python) and BITLINE_BINARY (the program)."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import pytest

sys.path.insert(0, os.environ.get("BITLINE_PYTHONPATH", os.path.join(os.path.dirname(__file__), "../../build/release/python")))
import bitline  # noqa: E402

BINARY = os.environ.get("BITLINE_BINARY", os.path.join(os.path.dirname(__file__), "../../build/release/src/cli/bitline"))
SERVE = dict(model="llama2-7b", system="h100x1", rate=6, input=300, output=50, requests=200)


def cli(*args):
    """The program's --json result for the same command line."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        r = subprocess.run([BINARY, *map(str, args), "--json", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(out) as f:
            return json.load(f)


def test_serve_run_is_the_programs():
    assert bitline.serve.run(**SERVE) == cli("serve", "run", "--model", "llama2-7b", "--system", "h100x1", "--rate", "6", "--input",
                                             "300", "--output", "50", "--requests", "200")


def test_lists_sets_and_flags_reach_the_command():
    py = bitline.serve.sweep(model="llama2-7b", system="h100x1", input=300, output=50, requests=100, rates=[1, 5], quiet=True,
                             set={"llm.compute.kernel_overhead": "3us"})
    assert py == cli("serve", "sweep", "--model", "llama2-7b", "--system", "h100x1", "--input", "300", "--output", "50",
                     "--requests", "100", "--rates", "1,5", "--quiet", "--set", "llm.compute.kernel_overhead=3us")
    assert [p["rate_per_s"] for p in py["points"]] == [1.0, 5.0]


def test_accel_and_cosmos_runs():
    a = bitline.accel.run(model="llama2-7b", system="h100x1", context="1000:100", slo=50)
    assert a == cli("accel", "run", "--model", "llama2-7b", "--system", "h100x1", "--context", "1000:100", "--slo", "50")
    assert a["feasible"] and a["batch"] > 0
    c = bitline.cosmos.run(workload="kcs", param="k=64", system="fc")
    assert c == cli("cosmos", "run", "--workload", "kcs", "--param", "k=64", "--system", "fc")


@pytest.mark.parametrize("options,says", [
    (dict(SERVE, set={"llm.compute.kernel_overhed": "3us"}), "did you mean 'kernel_overhead'"),
    (dict(SERVE, rat=6), "unknown option --rat; did you mean --rate?"),
    (dict(SERVE, rate=-1), "--rate"),
    (dict(SERVE, system="nosuchx1"), "unknown GPU kind 'nosuch'"),
    (dict(SERVE, requests="010"), "decimal"),
])
def test_bad_input_raises_config_error_with_the_programs_message(options, says):
    with pytest.raises(bitline.ConfigError) as e:
        bitline.serve.run(**options)
    assert says in str(e.value)
    assert isinstance(e.value, ValueError)


def test_the_interpreter_survives_and_runs_again_after_errors():
    for _ in range(3):
        with pytest.raises(bitline.ConfigError):
            bitline.serve.run(**dict(SERVE, input=0))
    assert bitline.serve.run(**SERVE)["summary"]["requests"] == 200


def test_no_feasible_result_raises_model_error():
    with pytest.raises(bitline.ModelError):
        bitline.accel.run(model="llama3.1-405b", system="h100x1", context="1000:100", slo=50)


def test_describe_lists_the_parameters():
    rows = bitline.describe("llm.compute")
    keys = {r["key"] for r in rows}
    assert "llm.compute.sms" in keys
    assert all({"key", "default", "source"} <= set(r) for r in rows)


def test_runs_in_threads_give_the_results_of_separate_runs_and_release_the_gil():
    alone = bitline.serve.run(**SERVE)
    results, ticks = [None] * 3, []
    done = threading.Event()

    def tick():  # runs only while the simulations let go of the interpreter
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    workers = [threading.Thread(target=lambda i=i: results.__setitem__(i, bitline.serve.run(**SERVE))) for i in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    done.set()
    t.join()
    assert all(r == alone for r in results)
    assert len(ticks) > 5  # the ticking thread ran during the simulations


def test_per_request_records_are_the_programs():
    r = bitline.serve.run(per_request=True, **SERVE)
    assert len(r["requests"]) == 200
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.jsonl")
        subprocess.run([BINARY, "serve", "run", "--model", "llama2-7b", "--system", "h100x1", "--rate", "6", "--input", "300", "--output",
                        "50", "--requests", "200", "--requests-out", out], check=True, capture_output=True)
        with open(out) as f:
            assert r["requests"] == [json.loads(line) for line in f]
    assert {"id", "ttft_ms", "e2e_ms", "input_tokens"} <= set(r["requests"][0])
    with pytest.raises(bitline.ConfigError):
        bitline.serve.run(requests_out="r.jsonl", **SERVE)


def test_to_dataframe_needs_pandas_or_gives_a_table():
    r = bitline.serve.run(per_request=True, **SERVE)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="python3-pandas"):
            bitline.to_dataframe(r)
        return
    df = bitline.to_dataframe(r)
    assert len(df) == 200 and "ttft_ms" in df.columns


def hostile_command_lines():
    """The self-contained refused command lines of the program's hostile-input tests (tests/cli/*.cpp,
    expect_bad_input("...", {...}): exit 2 there), read from those tests so the two lists stay one."""
    import glob
    import re
    import shlex
    here = os.path.dirname(os.path.abspath(__file__))
    lines = []
    for f in sorted(glob.glob(os.path.join(here, "..", "cli", "*.cpp"))):
        with open(f) as src:
            lines += re.findall(r'expect_bad_input\("([^"\\]*)",', src.read())
    return [shlex.split(l) for l in lines if l]


HOSTILE = hostile_command_lines()


def test_every_self_contained_hostile_input_is_refused_and_the_interpreter_survives():
    assert len(HOSTILE) >= 30
    for args in HOSTILE:
        with pytest.raises(bitline.ConfigError):
            bitline._bitline.run(args)
    assert bitline.serve.run(**SERVE)["summary"]["requests"] == 200
