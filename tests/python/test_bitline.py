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


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
JOB = os.path.join(ROOT, "configs/ssd/drives/fio/randread-4k-qd1.fio")  # 20000 random 4 KiB reads at QD1
DRIVE = os.path.join(ROOT, "configs/ssd/drives/samsung-980pro-1tb.xml")
FIO = dict(jobfile=JOB, device=DRIVE, occupancy=100, quiet=True)


def test_ssd_fio_is_the_programs():
    py = bitline.ssd.fio(**FIO)
    assert py == cli("ssd", "fio", JOB, "--device", DRIVE, "--occupancy", "100", "--quiet")
    assert json.dumps(py) == json.dumps(cli("ssd", "fio", JOB, "--device", DRIVE, "--occupancy", "100", "--quiet"))  # fio's key order
    assert py["jobs"][0]["read"]["total_ios"] == 20000


def test_ssd_fio_bad_job_file_raises_config_error_naming_its_file_and_line():
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "bad.fio")
        with open(job, "w") as f:
            f.write("[global]\nrw=randread\n\n[j]\nbs=4k\nnumber_ios=10\nread_bandwith=1\n")
        with pytest.raises(bitline.ConfigError) as e:
            bitline.ssd.fio(jobfile=job, device=DRIVE, quiet=True)
        assert f"{job}:7" in str(e.value) and "read_bandwith" in str(e.value)
    with pytest.raises(bitline.ConfigError, match="jobfile= is required"):
        bitline.ssd.fio(device=DRIVE)


SWEEP = dict(model="llama2-7b", system="h100x1", input=300, output=50, requests=100, rates=[1, 2, 5, 10], threads=2, quiet=True)


def progress_of(function, **options):
    """The result of function(**options, progress=...) and the reports it gave."""
    reports = []
    result = function(progress=lambda done, total, what: reports.append((done, total, what)), **options)
    return result, reports


def non_decreasing(reports):
    return all(a[0] <= b[0] for a, b in zip(reports, reports[1:]))


@pytest.mark.parametrize("function,options,units", [
    (bitline.serve.sweep, SWEEP, 4),  # its rates
    (bitline.serve.run, SERVE, 1),  # one simulation
    (bitline.ssd.fio, FIO, 20000),  # its requests
    (bitline.ssd.run, dict(device=DRIVE, workload=JOB[:-len(".fio")] + ".xml", quiet=True), 20000),  # the job's MQSim twin
    (bitline.cosmos.eval, dict(preset="flash-cosmos", experiment=os.path.join(ROOT, "tests/mpi/cosmos-tiny.yaml"), quiet=True), 16),
])
def test_progress_reports_come_in_order_and_change_nothing(function, options, units):
    result, reports = progress_of(function, **options)
    assert reports and non_decreasing(reports)
    assert reports[-1][:2] == (units, units) and all(isinstance(what, str) for _, _, what in reports)
    assert json.dumps(result) == json.dumps(function(**options))  # byte-identical without a callback


SESSIONS = """experiment: small-sessions
model: llama2-7b
systems: [h100x1, h200x1]
set: [sessions.output=200, sessions.first_input=500, sessions.new_input=100, sessions.turns_max=3]
loads:
  - {name: "2 decoding", set: [sessions.decoding=2, sessions.sessions=4]}
  - {name: "4 decoding", set: [sessions.decoding=4, sessions.sessions=8]}
"""


def test_progress_of_sessions_loads_on_systems(tmp_path):
    experiment = tmp_path / "sessions.yaml"
    experiment.write_text(SESSIONS)
    options = dict(experiment=str(experiment), quiet=True, threads=2)
    result, reports = progress_of(bitline.accel.sessions, **options)
    assert non_decreasing(reports) and reports[-1][:2] == (6, 6)  # (a base load and 2 loads) x 2 systems
    assert json.dumps(result) == json.dumps(bitline.accel.sessions(**options))


@pytest.mark.parametrize("threads", [1, 2])
def test_an_exception_in_the_callback_stops_the_run_and_is_raised(threads):
    calls = []

    class Stop(Exception):
        pass

    def stop(done, total, what):
        calls.append(threading.current_thread())
        raise Stop(f"stopped at {done} of {total}")

    with pytest.raises(Stop, match="stopped at 1 of 4"):
        bitline.serve.sweep(progress=stop, **dict(SWEEP, threads=threads, rates=[1, 2, 5, 10]))
    assert len(calls) == 1  # no report after the one that raised
    with pytest.raises(ZeroDivisionError):
        bitline.ssd.fio(progress=lambda done, total, what: 1 / 0, **FIO)
    with pytest.raises(TypeError):  # a callback of the wrong shape: Python's own error
        bitline.serve.run(progress=lambda done: None, **SERVE)
    with pytest.raises(TypeError, match="callable"):
        bitline.serve.run(progress=3, **SERVE)
    assert bitline.serve.run(**SERVE)["summary"]["requests"] == 200  # the interpreter goes on
