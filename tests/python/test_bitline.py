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
    """The self-contained refused command lines of the program's hostile-input tests (tests/cli/*.cpp and
    tests/ssd/test_hostile.cpp, expect_bad_input("...", {...}): exit 2 there), read from those tests so the two lists
    stay one."""
    import glob
    import re
    import shlex
    here = os.path.dirname(os.path.abspath(__file__))
    lines = []
    for f in sorted(glob.glob(os.path.join(here, "..", "cli", "*.cpp"))) + [os.path.join(here, "..", "ssd", "test_hostile.cpp")]:
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


# ---- Hostile command lines of tests/cli/test_hostile_surfaces.cpp (issue 57) ---------------------------------------------
# Its expect_refused(ARGS, {NEEDLES...}[, rc]) calls whose ARGS is made of string literals (adjacent ones joined), kAccelRun,
# out() (the test's <tmp>/out.json), local `const std::string` variables made of those, and quote(std::string(
# BITLINE_SOURCE_DIR) + "...") (a file of the source tree), read from that test so the two lists stay one; each is run
# through bitline._bitline.run with out() in a temporary folder: ConfigError naming every needle, no result written.
# 57 of its 113 calls are extracted (46 of literals, kAccelRun and out() alone, 9 through the locals m, ssb and sweep, 2 with
# the source tree's configs/ssb queries); the other 56, and why:
#   - 36 name a file the test writes first (write(...), or a local holding its path: experiments, models, traces, configs,
#     queries, a device file): their bytes are replayed in the "Hostile input FILES" section below, through the Python
#     function that reads such a file, except the ones that section lists as not replayed (--json and --csv on one file,
#     --json '', --json and --requests-out on one file).
#   - 16 name a file the test copies, links or spells in its folder (quote(path(...)), dir_ / "." / "out.json", the
#     preset-folder shadow): mostly outputs over inputs, the "output-" cases of that section where they apply.
#   - 1 is the loop `for (const std::string& cmd : {...}) expect_refused(cmd + ...)` (GeometriesTheSsdCannotAddressAreRefused,
#     256-byte pages): a loop variable, not a `std::string NAME = ...;` the parser follows; replayed by test_the_loop_of_pages_under_a_sector_is_refused_too.
#   - 3 expect rc 1 (NothingValidatedIsNoResult, NoResultAndNoFolderForNoFeasibleBatch, MessagesNameWhatIsWrong's capacity
#     SLO): no feasible result is bitline.ModelError (test_no_feasible_result_raises_model_error), not a refused input.
OUT_JSON = "\0out()\0"  # where out() stands in an extracted command line


def hostile_surface_command_lines():
    """(command line, needles) of the expect_refused calls of tests/cli/test_hostile_surfaces.cpp that are made of literals,
    kAccelRun, out(), locals of those and files of the source tree (out() as OUT_JSON), and the number of calls."""
    import re
    import shlex
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "cli", "test_hostile_surfaces.cpp")) as f:
        source = f.read()
    tokens = re.findall(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/|::|\w+|\S', source, re.S)  # literals, comments, words, marks
    tokens = [t for t in tokens if not t.startswith(("//", "/*"))]
    escapes = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}

    def split(toks, sep):  # at the top level of (), [] and {}
        parts, depth = [[]], 0
        for t in toks:
            depth += (t in "([{") - (t in ")]}")
            if t == sep and depth == 0:
                parts.append([])
            else:
                parts[-1].append(t)
        return parts

    def text(expr, known):  # the string `expr` makes, None where it holds anything else
        made = ""
        for term in split(expr, "+"):
            if term and all(t.startswith('"') for t in term):  # "a" "b": one literal
                if any(re.search(r'\\[^nt"\'\\]', t) for t in term):
                    return None  # an escape this reader does not know (\x..): not extracted
                made += "".join(re.sub(r"\\(.)", lambda m: escapes[m.group(1)], t[1:-1]) for t in term)
            elif term == ["out", "(", ")"]:
                made += OUT_JSON
            elif term == ["BITLINE_SOURCE_DIR"]:
                made += os.path.normpath(os.path.join(here, "..", ".."))
            elif len(term) == 1 and term[0] in known:
                made += known[term[0]]
            elif term[:2] in (["quote", "("], ["std::string", "("]) and term[-1] == ")":
                inner = text(term[2:-1], known)
                if inner is None:
                    return None
                made += shlex.quote(inner) if term[0] == "quote" else inner
            else:
                return None
        return made

    glued = []
    for t in tokens:  # std :: string as one token
        if len(glued) >= 2 and glued[-2:] == ["std", "::"] and t == "string":
            glued[-2:] = ["std::string"]
        else:
            glued.append(t)
    tokens, shared, known, in_test, lines, calls = glued, {}, {}, False, [], 0
    for i, t in enumerate(tokens):
        if t == "TEST_F":
            known, in_test = dict(shared), True  # a test's locals end with it
        elif t == "std::string" and tokens[i + 2:i + 3] == ["="]:  # [const] std::string NAME = EXPR;
            value = text(tokens[i + 3:tokens.index(";", i)], known)
            known.pop(tokens[i + 1], None)
            if value is not None:
                known[tokens[i + 1]] = value
                if not in_test:
                    shared[tokens[i + 1]] = value  # kAccelRun
        elif t == "expect_refused" and tokens[i + 1] == "(" and tokens[i + 2] != "const":  # a call, not the definition
            calls += 1
            end, depth = i + 1, 0
            while True:
                depth += (tokens[end] in "([{") - (tokens[end] in ")]}")
                if depth == 0:
                    break
                end += 1
            args = split(tokens[i + 2:end], ",")
            line = text(args[0], known)
            needles = [text(n, {}) for n in split(args[1][1:-1], ",")]
            if line is not None and None not in needles and (len(args) == 2 or args[2] == ["2"]):
                lines.append((line, needles))
    return lines, calls


SURFACE_LINES, SURFACE_CALLS = hostile_surface_command_lines()


def test_every_hostile_surface_command_line_is_refused_and_the_interpreter_survives():
    """Every SURFACE_LINES command raises ConfigError with every needle of its C++ test (an OverflowError's message ends,
    as the program's, with "; the run's inputs (one is past what can be simulated): --set ..., --batch ..."), leaves
    nothing in its folder, and the interpreter runs on."""
    import shlex
    assert len(SURFACE_LINES) >= 57 and SURFACE_CALLS >= len(SURFACE_LINES)  # a parser that reads fewer fails here
    failures = []
    for line, needles in SURFACE_LINES:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.json")
            try:
                bitline._bitline.run(shlex.split(line.replace(OUT_JSON, shlex.quote(out))))
                failures.append(f"{line!r}: not refused")
                continue
            except bitline.ConfigError as e:
                message = str(e)
            missing = [n for n in (n.replace(OUT_JSON, out) for n in needles) if n not in message]
            if missing or "internal error" in message or os.listdir(tmp):
                failures.append(f"{line!r}: missing {missing}, left {os.listdir(tmp)}, got {message[:500]!r}")
    assert not failures, "\n".join(failures)
    assert bitline.serve.run(**SERVE)["summary"]["requests"] == 200


def test_the_loop_of_pages_under_a_sector_is_refused_too():
    """HostileSurfaces.GeometriesTheSsdCannotAddressAreRefused's loop over two commands, which the extractor above does
    not follow (a loop variable)."""
    q11 = os.path.join(ROOT, "configs/ssb/q1.1.yaml")
    for cmd in (["cosmos", "write-bw", "--bytes", "1MiB"], ["cosmos", "ssb", "--sf", "0.001", "--query", q11]):
        with tempfile.TemporaryDirectory() as tmp:
            with pytest.raises(bitline.ConfigError) as e:
                bitline._bitline.run(cmd + ["--set", "nand.geometry.page_size=256B", "--set", "nand.ecc.codeword=256B", "--json",
                                            os.path.join(tmp, "out.json")])
            assert "nand.geometry.page_size = 256 B" in str(e.value) and "512-byte sectors" in str(e.value)
            assert not os.listdir(tmp)


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


# ---- Hostile input FILES (issue 57): the refused inputs of the hostile-input tests that the test builds as files -------------
# Each case below writes the same bytes as its C++ test (named in the comment above it) into a temporary folder, calls the
# Python function that reads such a file, and expects bitline.ConfigError naming the file (and the key or line where the C++
# test asserts them), with every file of the folder unchanged and no other file left behind (no result, no .partial).
#
# Not replayed here, and why:
#   - Literal command lines (expect_bad_input("...", ...) in tests/cli/*.cpp and tests/ssd/test_hostile.cpp): replayed by
#     test_every_self_contained_hostile_input_is_refused_and_the_interpreter_survives above (/dev/zero as --config or
#     --model among them).
#   - The command lines of tests/cli/test_hostile_surfaces.cpp made of literals, kAccelRun and out(): replayed by
#     test_every_hostile_surface_command_line_is_refused_and_the_interpreter_survives above.
#   - Hostile.ArgumentErrorsExitTwoHelpAndVersionZero (--help/--version exit 0), HostileSurfaces.MessagesNameWhatIsWrong's
#     `serve run --help >/dev/full` (a standard output that cannot take the help): exit codes and stdout of the program,
#     no input file; Python returns results instead of printing them.
#   - Hostile.UnwritableJsonIsRefusedBeforeTheWork, HostileSurfaces.OutputsMustBeDistinctFilesAndNoInput's --json/--mqsim-xml
#     on one file and --json '', HostileSurfaces.ListsAndNumbersAreReadOneWayEverywhere's --requests-out r.txt,
#     SsdHostile.OptionsThatWouldDoNothingAreRefused's --json '', the preset-folder shadow (--json configs/csi.yaml): the
#     Python functions choose --json and --requests-out themselves (json= and requests_out= raise ConfigError, see
#     test_per_request_records_are_the_programs); the ones that name a file the command reads are replayed through
#     bitline._bitline.run below ("output-" cases), the ones that would write into the source tree are not.
#   - SsdFioCli.WritesLogsBesideTheJson (a write_bw_log that would overwrite the job file): from Python the logs are written
#     beside the temporary --json and moved to the current folder, so they never land beside the job file.
#   - HostileSurfaces.NothingValidatedIsNoResult, MessagesNameWhatIsWrong's capacity SLO, NoResultAndNoFolderForNoFeasibleBatch:
#     exit 1 (bitline.ModelError, test_no_feasible_result_raises_model_error), and no input file.
#   - SsdHostile.AWorkloadOfManyScenariosIsHeldToTwiceTheBudget: 200 scenarios of ~3.6 M page transactions each under
#     --max-transactions 4000000; the refusal at scenario 3 takes 1.7 s here (over the 0.5 s a case may take); the same
#     budget check refuses the "ssd-work-*" cases.
#   - The MPI launches (tests/mpi) are not hostile-input tests and do not apply to the in-process module.

ROOT_CONFIGS = os.path.join(ROOT, "configs")
DIR, FIFO = ("dir",), ("fifo",)  # a file of a case that is a folder or a named pipe


def read(rel):
    with open(os.path.join(ROOT_CONFIGS, rel), encoding="utf-8") as f:
        return f.read()


def replaced(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


def alias_bomb_flow():  # Hostile: 10 anchors of 10 aliases each, 9 levels deep: 10^9 values once expanded
    s = "{a0: &a0 [x, x, x, x, x, x, x, x, x, x]"
    for i in range(1, 9):
        s += f", a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]"
    return s + "}"


def alias_bomb_of_long_scalars():  # Hostile.YamlAliasBombOfLongScalars: 9^4 copies of a 3,000-byte scalar
    yaml = 'nand:\n  a: &a "' + "x" * 3000 + '"\n'
    for level in "bcde":
        yaml += f"  {level}: &{level} [" + ", ".join(["*" + chr(ord(level) - 1)] * 9) + "]\n"
    return yaml


DEEP = "[" * 200000 + "]" * 200000
WIDE = "[" + ",".join(["1"] * 100000) + "]"
MODEL_HEAD = '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008, '
ACCEL = dict(system="csix8", context="long", slo=100)
ENGINE = dict(model="llama2-7b", system="h100x1", rate=4, requests=20, input=100, output=20)
TINY_COSMOS_EVAL = "experiment: t\nsweep: {months: [1]}\nsystems: [fc]\n"
TINY = dict(system="csix4", context="512:128", slo=20)
STATIC = dict(context="128:8", batch=1, static_batch=True)
TRACE_RUN = dict(model="tiny-test", system="h100x1")


def mixtral(extra):  # HostileSurfaces: a Mixtral-shaped config.json with `extra` fields
    return ('{"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 64, ' + extra +
            ' "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, '
            '"vocab_size": 256, "torch_dtype": "bfloat16"}')


def deepseek(old, new):  # HostileSurfaces.OptionalModelFieldsAreCheckedWhereGiven: configs/models/deepseek-v3.json, one value changed
    return replaced(read("models/deepseek-v3.json"), old, new)


def sessions_trace(lines, input_tokens, output_tokens):
    return "".join(f'{{"session": {s}, "turn": 1, "input_tokens": {input_tokens}, "output_tokens": {output_tokens}, "timestamp": {t}}}\n'
                   for s, t in lines)


# SsdHostile (tests/ssd/test_hostile.cpp): MQSim's workload file and configs/ssd/device.xml with one element changed.
SMALL_MIXED = ("<Read_Percentage>50</Read_Percentage><Average_Request_Size>8</Average_Request_Size><Average_No_of_Reqs_in_Queue>4"
               "</Average_No_of_Reqs_in_Queue><Total_Requests_To_Generate>2000</Total_Requests_To_Generate>")


def synthetic_flow(body):
    return ("<IO_Flow_Parameter_Set_Synthetic><Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>" + body +
            "</IO_Flow_Parameter_Set_Synthetic>")


def workload(flows):
    return "<MQSim_IO_Scenarios><IO_Scenario>" + flows + "</IO_Scenario></MQSim_IO_Scenarios>"


def device(element, value):
    t = read("ssd/device.xml")
    a, b = t.index(f"<{element}>") + len(element) + 2, t.index(f"</{element}>")
    return t[:a] + value + t[b:]


def trace_xml(path):  # configs/ssd/trace.xml replaying `path`
    t = read("ssd/trace.xml")
    a, b = t.index("<File_Path>") + len("<File_Path>"), t.index("</File_Path>")
    return t[:a] + path + t[b:]


def ssd_run(p, dev="dev.xml", wl="wl.xml", **more):  # SsdHostile::args: ssd run --quiet --device DEV --workload WL
    return bitline.ssd.run(quiet=True, device=p(dev), workload=p(wl), **more)


WL = {"wl.xml": workload(synthetic_flow(SMALL_MIXED))}
FAR_TRACE = ("<IO_Flow_Parameter_Set_Trace_Based><File_Path>far.trace</File_Path><Time_Unit>NANOSECOND</Time_Unit>"
             "</IO_Flow_Parameter_Set_Trace_Based>")


def fio_case(name, text, needles, **more):  # SsdFioCli::expect_refused: ssd fio job.fio --device configs/ssd/device.xml --quiet
    return pytest.param({"job.fio": text},
                        lambda p: bitline.ssd.fio(jobfile=p("job.fio"), device=os.path.join(ROOT_CONFIGS, "ssd/device.xml"), quiet=True,
                                                  **more),
                        needles, id="fio-" + name)


def case(name, files, call, needles):
    return pytest.param(files, call, needles, id=name)


HOSTILE_FILES = [
    # ---- tests/cli/test_hostile_input.cpp ----
    # Hostile.YamlAliasBombInAConfigFile
    case("yaml-alias-bomb", {"bomb.yaml": "nand: " + alias_bomb_flow() + "\n"},
         lambda p: bitline.command("nand", "rber", config=p("bomb.yaml")), ["bomb.yaml:1", "more than 100000 values", "alias"]),
    # Hostile.YamlAliasBombOfLongScalars
    case("yaml-alias-bomb-long-scalars", {"long.yaml": alias_bomb_of_long_scalars()},
         lambda p: bitline.command("nand", "rber", config=p("long.yaml")), ["long.yaml", "more than 8388608 bytes of values", "alias"]),
    # Hostile.YamlStrayCommaAfterAFlowCollection
    case("yaml-stray-comma", {"comma.yaml": "nand: {timing: {t_read_slc: 30us}},\n"},
         lambda p: bitline.command("nand", "rber", config=p("comma.yaml")), ["comma.yaml:1:", "malformed YAML"]),
    # Hostile.YamlNestingDepth
    case("yaml-flow-nesting", {"flow.yaml": "nand: " + "[" * 5000 + "]" * 5000 + "\n"},
         lambda p: bitline.command("nand", "rber", config=p("flow.yaml")), ["flow.yaml", "nested deeper than 32 levels"]),
    case("yaml-block-nesting", {"block.yaml": "nand:\n" + "".join(" " * i + f"k{i}:\n" for i in range(40))},
         lambda p: bitline.command("nand", "rber", config=p("block.yaml")), ["block.yaml", "nested deeper than 32 levels"]),
    # Hostile.YamlBaseFanOutAndBadNames
    case("yaml-base-fan-out", {"fan.yaml": "base: [" + ", ".join(["csi"] * 40) + "]\n"},
         lambda p: bitline.command("hbf", "info", config=p("fan.yaml")), ["more than 32 config files", "base:"]),
    case("yaml-base-up", {"up.yaml": "base: ../configs/csi\n"},
         lambda p: bitline.command("hbf", "info", config=p("up.yaml")), ["up.yaml:1", "base: a preset name"]),
    # Hostile.ConfigMustBeASmallRegularFile (/dev/zero: a literal command line, replayed above)
    case("config-is-a-directory", {}, lambda p: bitline.command("nand", "rber", config=p("")[:-1]), ["{dir}", "is a directory"]),
    case("config-missing", {}, lambda p: bitline.command("nand", "rber", config=p("missing.yaml")), ["missing.yaml", "no such file"]),
    case("config-too-big", {"big.yaml": "# " + "x" * (2 << 20) + "\n"},
         lambda p: bitline.command("nand", "rber", config=p("big.yaml")), ["big.yaml", "byte limit for a config file"]),
    case("model-folder-path", {}, lambda p: bitline.accel.run(model=p(""), **ACCEL), ["unknown model"]),
    case("model-is-a-directory", {"m.json": DIR}, lambda p: bitline.accel.run(model=p("m.json"), **ACCEL),
         ["m.json", "is a directory, not a model description"]),
    # Hostile.JsonNestingInAModelAndATrace
    case("json-model-nesting", {"deep.json": '{"model_type": "llama", "hidden_size": ' + DEEP + "}"},
         lambda p: bitline.accel.run(model=p("deep.json"), **ACCEL), ["deep.json", "nested deeper than 32 levels"]),
    case("json-trace-nesting", {"deep.jsonl": '{"session": 1, "turn": ' + DEEP + "}\n"},
         lambda p: bitline.accel.sessions(trace=p("deep.jsonl")), ["deep.jsonl:1", "nested deeper than 32 levels"]),
    # Hostile.JsonMessagesDoNotRepeatHugeValues
    case("json-model-huge-value", {"wide.json": '{"model_type": "llama", "hidden_size": ' + WIDE + ', "num_hidden_layers": 2}'},
         lambda p: bitline.accel.run(model=p("wide.json"), **ACCEL), ["wide.json", "field 'hidden_size'", "a list of 100000 values"]),
    case("json-trace-huge-value", {"wide.jsonl": '{"session": 1, "turn": 1, "input_tokens": ' + WIDE + "}\n"},
         lambda p: bitline.accel.sessions(trace=p("wide.jsonl")), ["wide.jsonl:1", "input_tokens", "a list of 100000 values"]),
    case("json-mooncake-hash-ids", {"wide-ids.jsonl": '{"timestamp": 0, "input_length": 1073741824, "output_length": 1, "hash_ids": [0'
                                                      + ",1" * (1 << 21) + "]}\n"},
         lambda p: bitline.accel.sessions(trace=p("wide-ids.jsonl")), ["wide-ids.jsonl:1", "more than 2097152 JSON values"]),
    # Hostile.TokenCountsCannotWrap
    case("trace-tokens-huge", {"huge.jsonl": '{"session": 1, "turn": 1, "input_tokens": 9000000000000000000, "output_tokens": '
                                             '9000000000000000000, "timestamp": 0}\n'},
         lambda p: bitline.accel.sessions(trace=p("huge.jsonl")), ["huge.jsonl:1", "input_tokens", "above the maximum"]),
    case("trace-tokens-unsigned", {"unsigned.jsonl": '{"session": 1, "turn": 1, "input_tokens": 18446744073709551615, '
                                                     '"output_tokens": 1, "timestamp": 0}\n'},
         lambda p: bitline.accel.sessions(trace=p("unsigned.jsonl")), ["unsigned.jsonl:1", "input_tokens", "above the maximum"]),
    # Hostile.ModelSizesAreCapped
    case("model-layers", {"layers.json": MODEL_HEAD + '"num_hidden_layers": 1099511627776}'},
         lambda p: bitline.accel.run(model=p("layers.json"), **ACCEL), ["layers.json", "num_hidden_layers", "above the maximum 1024"]),
    case("model-experts", {"experts.json": MODEL_HEAD + '"num_hidden_layers": 1024, "num_experts": 16384, "num_experts_per_tok": 8, '
                                                        '"moe_intermediate_size": 1024}'},
         lambda p: bitline.accel.run(model=p("experts.json"), **ACCEL),
         ["experts.json", "num_experts", "weight tensors, more than the 1048576"]),
    case("model-hidden-1e300", {"hidden.json": MODEL_HEAD + '"num_hidden_layers": 2, "hidden_size": 1e300}'},
         lambda p: bitline.accel.run(model=p("hidden.json"), **ACCEL), ["hidden.json", "hidden_size"]),
    # Hostile.HugeTokenCountsAreRefusedNamingTheBound
    case("trace-output-past-a-request", {"big.jsonl": sessions_trace([(s, 10 * s) for s in range(60)], 1000, 1073741824)},
         lambda p: bitline.accel.sessions(trace=p("big.jsonl")),
         ["big.jsonl", "1000 prompt and 1073741824 output tokens: need 1 to 4194304 each"]),
    # Hostile.EveryKeyIsCheckedWhicheverCommandRuns
    case("config-unknown-key", {"typo.yaml": "workload:\n  userz: 5\n"},
         lambda p: bitline.accel.run(model="qwen3-235b", config=p("typo.yaml"), **ACCEL), ["typo.yaml:2", "workload.userz"]),
    # Hostile.ServingEngineProfilesAndOptions
    case("engine-missing", {}, lambda p: bitline.serve.run(engine=p("none.yaml"), **ENGINE), ["none.yaml", "no such file"]),
    case("engine-partial", {"partial.yaml": "engine:\n  family: vllm\n  version: mine\n  max_num_seqs: 64\n"},
         lambda p: bitline.serve.run(engine=p("partial.yaml"), **ENGINE),
         ["partial.yaml", "engine.gpu_memory_utilization", "engine.host.schedule", "missing"]),
    case("engine-misspelt-family", {"misspelt.yaml": "engine:\n  family: sglang2\n"},
         lambda p: bitline.serve.run(engine=p("misspelt.yaml"), **ENGINE),
         ["misspelt.yaml:2", "engine.family", "sglang2", "did you mean 'sglang'"]),
    case("engine-other-section", {"other.yaml": "engine:\n  family: ideal\nserve:\n  max_num_seqs: 8\n"},
         lambda p: bitline.serve.run(engine=p("other.yaml"), **ENGINE), ["other.yaml", "serve", "only the section engine"]),
    case("engine-unknown-option", {"unknown.yaml": "engine:\n  family: ideal\n  speed: 2\n"},
         lambda p: bitline.serve.run(engine=p("unknown.yaml"), **ENGINE), ["unknown.yaml:3", "engine.speed", "unknown option"]),

    # ---- tests/cli/test_hostile_surfaces.cpp ----
    # HostileSurfaces.CosmosCompareNamesSystemsThatRun
    case("cosmos-compare-absent", {"absent.yaml": TINY_COSMOS_EVAL + "compare: [fc/osp]\n"},
         lambda p: bitline.cosmos.eval(quiet=True, experiment=p("absent.yaml")),
         ["absent.yaml:4", "compare[0]", "'osp'", "not in systems: [fc]"]),
    case("cosmos-compare-three", {"three.yaml": "experiment: t\nsweep: {months: [1]}\nsystems: [fc, osp, isp]\ncompare: [fc/osp/isp]\n"},
         lambda p: bitline.cosmos.eval(quiet=True, experiment=p("three.yaml")),
         ["three.yaml", "compare[0]", "'fc/osp/isp'", "exactly two systems A/B"]),
    case("cosmos-compare-self", {"self.yaml": TINY_COSMOS_EVAL + "compare: [fc/fc]\n"},
         lambda p: bitline.cosmos.eval(quiet=True, experiment=p("self.yaml")), ["self.yaml", "compare[0]", "with itself"]),
    # HostileSurfaces.MoeShapesThatCannotBe
    case("moe-zero-experts", {"zero.json": mixtral('"num_local_experts": 0, "num_experts_per_tok": 2,')},
         lambda p: bitline.accel.run(model=p("zero.json"), **TINY),
         ["zero.json", "num_local_experts", "0 experts", "num_experts_per_tok is 2"]),
    case("moe-all-dense", {"dense.json": mixtral('"num_local_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 2,')},
         lambda p: bitline.accel.run(model=p("dense.json"), **TINY),
         ["dense.json", "first_k_dense_replace", "2 leading dense layers of 2 layers"]),
    # HostileSurfaces.DuplicateJsonKeysAreRefused
    case("json-model-duplicate-key", {"twice.json": mixtral('"hidden_size": 128,')},
         lambda p: bitline.accel.run(model=p("twice.json"), **TINY), ["twice.json", 'duplicate key "hidden_size"']),
    case("json-trace-duplicate-key", {"trace.jsonl": '{"session": 1, "turn": 1, "input_tokens": 10, "input_tokens": 20, '
                                                     '"output_tokens": 5, "timestamp": 0}\n'},
         lambda p: bitline.accel.sessions(trace=p("trace.jsonl")), ["trace.jsonl:1", 'duplicate key "input_tokens"']),
    # HostileSurfaces.ConfigFilesAreOneNonEmptyDocument
    case("config-two-documents", {"two.yaml": "nand:\n  timing:\n    t_read_slc: 30us\n---\nnand:\n  timing:\n    t_read_slc: 40us\n"},
         lambda p: bitline.command("nand", "demo", config=p("two.yaml")), ["two.yaml", "2 YAML documents"]),
    case("config-empty", {"empty.yaml": "# nothing but a comment\n"},
         lambda p: bitline.command("nand", "demo", config=p("empty.yaml")), ["empty.yaml", "empty config file"]),
    case("gpu-kind-empty", {"empty.yaml": "# nothing but a comment\n"},
         lambda p: bitline.accel.run(model="tiny-test", system=p("empty.yaml"), gpus=1, context="512:128", slo=20),
         ["empty.yaml", "empty config file"]),
    # HostileSurfaces.MisspeltExperimentKeyIsNamed
    case("experiment-misspelt-key", {"typo.yaml": "experiment: t\nmodels: [tiny-test]\ncontexts: [{name: c, input: 512, output: 128}]\n"
                                                  "slo_ms: [20]\nsystems: [csix4]\nbaseline: csix4\n"},
         lambda p: bitline.accel.eval(quiet=True, experiment=p("typo.yaml")), ["typo.yaml:4", "slo_ms", "did you mean 'slos_ms'"]),
    # HostileSurfaces.EvaluationMatricesAreBounded
    case("experiment-matrix-too-big",
         {"big.yaml": "experiment: t\nmodels: [tiny-test]\ncontexts: [" +
                      ", ".join(f"{{name: c{i}, input: 512, output: 128}}" for i in range(101)) + "]\nslos_ms: [" +
                      ", ".join(str(i) for i in range(1, 101)) + "]\nsystems: [csix4]\nbaseline: csix4\n"},
         lambda p: bitline.accel.eval(quiet=True, experiment=p("big.yaml")),
         ["big.yaml", "10100 points", "1 x 101 x 100 x 1", "more than the 10000"]),
    case("ablation-too-many-variants",
         {"abl.yaml": "experiment: t\nmodel: tiny-test\ngpus: 4\nbatch_per_rank: 4\ncontext: {name: c, input: 512, output: 128}\n"
                      "slo_ms: 20\nvariants:\n" + "".join(f"  - {{name: v{i}, description: d, kind: csi}}\n" for i in range(1001))},
         lambda p: bitline.accel.ablation(experiment=p("abl.yaml")), ["abl.yaml", "variants", "1001 variants", "more than the 1000"]),
    # HostileSurfaces.LongRunsAreRefusedWithTheirEstimate
    case("sessions-too-long", {"long.jsonl": sessions_trace([(s, s) for s in range(300)], 1000, 4000000)},
         lambda p: bitline.accel.sessions(trace=p("long.jsonl")),
         ["--trace", "long.jsonl", "4.8e+09 output tokens to simulate", "1 loads x 4 systems", "more than the 4e+09",
          "estimated 48 s"]),
    case("sessions-too-many-prefix-keys", {"wide.jsonl": sessions_trace([(s, s) for s in range(1100)], 4000000, 1)},
         lambda p: bitline.accel.sessions(trace=p("wide.jsonl")),
         ["wide.jsonl", "8593200 prefix keys of 512 tokens", "more than the 8388608"]),
    case("cosmos-sweep-too-big",
         {"cosmos-big.yaml": "experiment: t\nsystems: [osp, isp, parabit, fc]\nsweep:\n  months: [" +
                             ", ".join(str(m) for m in range(1, 1201)) + "]\n  images: [" +
                             ", ".join(str(i) for i in range(1, 1302)) + "]\n"},
         lambda p: bitline.cosmos.eval(quiet=True, experiment=p("cosmos-big.yaml")),
         ["cosmos-big.yaml", "sweep", "10004 runs (2501 points x 4 systems)", "more than the 10000"]),
    # HostileSurfaces.SsbIndexAndFilterLimitsNameTheirCause
    case("ssb-query-too-many-products",
         {"ne.yaml": "query: NE\nwhere:\n" + "".join(f"  - lo_quantity <> {i}\n" for i in range(1, 50)) + "sum: lo_revenue\nas: r\n"},
         lambda p: bitline.cosmos.ssb(sf=0.001, query=p("ne.yaml")), ["ne.yaml: query NE:", "products"]),
    case("ssb-query-huge-value", {"big.yaml": "query: BIG\nwhere:\n  - lo_quantity = " + "x" * 900000 + "\nsum: lo_revenue\nas: r\n"},
         lambda p: bitline.cosmos.ssb(sf=0.001, query=p("big.yaml")), ["big.yaml:3: where[0]", "(900000 characters)"]),
    # HostileSurfaces.SsbAnswersAreBoundedBeforeTheRun
    case("ssb-query-too-many-groups", {"g4.yaml": "query: G4\nwhere:\n  - lo_quantity < 50\n"
                                                  "group_by: [c_city, s_city, p_brand1, d_yearmonth]\nsum: lo_revenue\nas: r\n"},
         lambda p: bitline.cosmos.ssb(sf=1, quiet=True, query=p("g4.yaml")),
         ["g4.yaml: query G4", "250 c_city x 250 s_city x 1000 p_brand1 x 84 d_yearmonth", "524288 groups"]),
    case("ssb-query-flash-reads", {"g3.yaml": "query: G3\ngroup_by: [c_city, s_city, d_year]\nsum: lo_revenue\nas: r\n"},
         lambda p: bitline.cosmos.ssb(sf=0.001, timing_only=True, aggregation="flash", query=p("g3.yaml")),
         ["g3.yaml: query G3", "fc_reads", "--aggregation host"]),
    # HostileSurfaces.AccelOutputsAreNoInputAndValuesMeanWhatTheySay (the --json outputs: "output-" cases below)
    case("gpu-kind-only-a-description", {"d.yaml": 'description: "only"\n'},
         lambda p: bitline.accel.run(model="llama2-7b", system=p("d.yaml") + "x1", context="1024:256", slo=50),
         ["d.yaml: only a description"]),
    # HostileSurfaces.ExperimentContextsAndLinkRatesAreBounded
    case("experiment-context-of-0-tokens", {"e.yaml": "experiment: t\nmodels: [tiny-test]\ncontexts:\n  - {name: z, input: 0, output: 8}\n"
                                                      "slos_ms: [50]\nsystems: [h100x1]\nbaseline: h100x1\n"},
         lambda p: bitline.accel.eval(quiet=True, experiment=p("e.yaml")), ["e.yaml", "input"]),
    # HostileSurfaces.OptionalModelFieldsAreCheckedWhereGiven
    case("model-sliding-window", {"sw.json": mixtral('"sliding_window": -5,')},
         lambda p: bitline.accel.run(model=p("sw.json"), system="h100x1", **STATIC), ["sw.json", "sliding_window", "-5"]),
    case("model-max-positions", {"mp.json": mixtral('"max_position_embeddings": "4k",')},
         lambda p: bitline.accel.run(model=p("mp.json"), system="h100x1", **STATIC), ["mp.json", "max_position_embeddings", "4k"]),
    case("model-fp8-format", {"f.json": deepseek('"fmt": "e4m3"', '"fmt": "int4"')},
         lambda p: bitline.accel.run(model=p("f.json"), system="h200x8", **STATIC), ["f.json", "quantization_config", "int4"]),
    case("model-n-group-0", {"g0.json": deepseek('"n_group": 8', '"n_group": 0')},
         lambda p: bitline.accel.run(model=p("g0.json"), system="h200x8", **STATIC), ["g0.json", "n_group", "0"]),
    case("model-n-group-7", {"g7.json": deepseek('"n_group": 8', '"n_group": 7')},
         lambda p: bitline.accel.run(model=p("g7.json"), system="h200x8", **STATIC), ["g7.json", "n_group", "256 experts"]),
    case("model-topk-group-9", {"t9.json": deepseek('"topk_group": 4', '"topk_group": 9')},
         lambda p: bitline.accel.run(model=p("t9.json"), system="h200x8", **STATIC), ["t9.json", "topk_group", "9"]),
    # HostileSurfaces.TraceFilesAreReadExactly
    case("trace-csv-column-twice", {"dup.csv": "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n0,10,5,11\n"},
         lambda p: bitline.serve.run(trace=p("dup.csv"), **TRACE_RUN), ["dup.csv:1", "'ContextTokens' twice"]),
    case("trace-csv-hex-time", {"hex.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n0x1p3,10,5\n"},
         lambda p: bitline.serve.run(trace=p("hex.csv"), **TRACE_RUN), ["hex.csv:2", "'0x1p3' is not a time"]),
    case("trace-csv-february-31", {"feb.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-31 00:00:00,10,5\n"},
         lambda p: bitline.serve.run(trace=p("feb.csv"), **TRACE_RUN), ["feb.csv:2", "'2023-02-31 00:00:00' is not a time"]),
    case("trace-session-two-spellings",
         {"s.jsonl": '{"session": 7, "turn": 1, "input_tokens": 10, "output_tokens": 5, "timestamp": 0}\n'
                     '{"session": "7", "turn": 2, "input_tokens": 20, "output_tokens": 5, "timestamp": 1}\n'},
         lambda p: bitline.serve.run(trace=p("s.jsonl"), **TRACE_RUN), ["s.jsonl:2", "field 'session'", "line 1 names 7"]),
    case("trace-request-of-0-tokens",
         {"long.jsonl": '{"session": "a", "turn": 1, "input_tokens": 10, "output_tokens": 5, "timestamp": 0}\n'
                        '{"session": "b", "turn": 1, "input_tokens": 0, "output_tokens": 5, "timestamp": 1}\n'},
         lambda p: bitline.serve.run(trace=p("long.jsonl"), **TRACE_RUN), ["long.jsonl:2", "0 prompt and 5 output tokens"]),
    # HostileSurfaces.MessagesNameWhatIsWrong (text after the root element of a device file)
    case("ssd-device-trailing-text", {"d.xml": read("ssd/device.xml") + "trailing text\n"},
         lambda p: bitline.ssd.run(device=p("d.xml"), workload=os.path.join(ROOT_CONFIGS, "ssd/read.xml")),
         ["d.xml: text after the root element", "trailing text"]),
    # HostileSurfaces.OutputsMustBeDistinctFilesAndNoInput and NoOutputOverwritesAFileTheCommandReads: an output a Python
    # function takes (csv=) naming an input
    case("csv-is-the-experiment", {"e.yaml": TINY_COSMOS_EVAL},
         lambda p: bitline.cosmos.eval(experiment=p("e.yaml"), csv=p("e.yaml")), ["--csv", "this command reads that file (--experiment"]),
    case("csv-is-the-model-by-a-link", {"m.json": read("models/llama2-7b.json"), "link.json": ("link", "m.json")},
         lambda p: bitline.serve.sweep(model=p("m.json"), system="h100x1", rates=[1, 2], requests=5, input=10, output=5,
                                       csv=p("link.json")),
         ["--csv", "this command reads that file (--model"]),
    # ... and through bitline._bitline.run, the --json of the command line naming an input (the functions give their own)
    case("output-json-is-the-model", {"m.json": read("models/llama2-7b.json")},
         lambda p: bitline._bitline.run(["serve", "run", "--model", p("m.json"), "--system", "h100x1", "--rate", "2", "--requests", "5",
                                         "--input", "10", "--output", "5", "--json", os.path.join(p("."), "m.json")]),
         ["--json", "this command reads that file (--model"]),
    case("output-json-is-the-kind-by-a-hard-link", {"k.yaml": read("gpus/h100.yaml"), "hard.yaml": ("hardlink", "k.yaml")},
         lambda p: bitline._bitline.run(["serve", "run", "--model", "llama2-7b", "--system", p("k.yaml") + "x1", "--rate", "2",
                                         "--requests", "5", "--input", "10", "--output", "5", "--json", p("hard.yaml")]),
         ["--json", "this command reads that file (config file"]),
    case("output-json-is-the-lengths", {"l.csv": "a\n5\n6\n"},
         lambda p: bitline._bitline.run(["serve", "capacity", "--model", "llama2-7b", "--system", "h100x1", "--requests", "5", "--input",
                                         "csv:" + p("l.csv") + ":a", "--output", "5", "--json", p("l.csv")]),
         ["--json", "this command reads that file (--input"]),
    case("output-json-is-the-config", {"c.yaml": "nand: {}\n"},
         lambda p: bitline._bitline.run(["hbf", "info", "--config", p("c.yaml"), "--json", p("c.yaml")]), ["config file"]),
    case("output-json-is-the-query", {"q.yaml": read("ssb/q1.1.yaml")},
         lambda p: bitline._bitline.run(["cosmos", "ssb", "--sf", "0.001", "--query", p("q.yaml"), "--json", p("q.yaml")]), ["(--query"]),
    case("output-json-is-the-device", {"dev.xml": read("ssd/device.xml")},
         lambda p: bitline._bitline.run(["ssd", "run", "--device", p("dev.xml"), "--workload", os.path.join(ROOT_CONFIGS, "ssd/read.xml"),
                                         "--json", p("dev.xml")]), ["--json", "this command reads that file (--device"]),
    case("output-json-is-a-folder", {}, lambda p: bitline._bitline.run(["hbf", "stream", "--preset", "csi", "--json", p("")[:-1]]),
         ["--json", "is a directory"]),
    case("output-json-under-a-file", {"file.txt": "x"},
         lambda p: bitline._bitline.run(["hbf", "stream", "--preset", "csi", "--json", p("file.txt") + "/out.json"]),
         ["--json", "is not a folder"]),
    case("output-partial-is-a-folder", {"res.json.partial": DIR},
         lambda p: bitline._bitline.run(["accel", "run", "--model", "qwen3-235b", "--system", "csix8", "--context", "long", "--slo", "100",
                                         "--json", p("res.json")]), ["res.json.partial is a directory"]),

    # ---- tests/ssd/test_hostile.cpp ----
    # SsdHostile.CachesSmallerThanOneEntryAreRefused
    case("ssd-cmt-below-an-entry", dict(WL, **{"dev.xml": device("CMT_Capacity", "8")}), ssd_run,
         ["dev.xml", "<CMT_Capacity> 8 bytes", "below one mapping entry", "9 bytes"]),
    case("ssd-cache-below-a-page", dict(WL, **{"dev.xml": device("Data_Cache_Capacity", "4096")}), ssd_run,
         ["dev.xml", "<Data_Cache_Capacity> 4096 bytes", "no page of 8192 bytes", "WRITE_CACHE"]),
    case("ssd-cache-partitioned-below-a-page",
         {"wl2.xml": workload(synthetic_flow(SMALL_MIXED) * 2),
          "dev.xml": replaced(replaced(read("ssd/device.xml"), "<Data_Cache_Sharing_Mode>SHARED<",
                                       "<Data_Cache_Sharing_Mode>EQUAL_PARTITIONING<"),
                              "<Data_Cache_Capacity>268435456<", "<Data_Cache_Capacity>12288<")},
         lambda p: ssd_run(p, wl="wl2.xml"), ["dev.xml", "6144 per flow, EQUAL_PARTITIONING over 2 flows"]),
    case("ssd-no-cmt", dict(WL, **{"dev.xml": device("CMT_Capacity", "0")}), ssd_run,
         ["dev.xml", "<CMT_Capacity> 0 bytes", "<Ideal_Mapping_Table> true"]),
    # SsdHostile.TraceTimesPastTheEngineRangeAreRefusedInTheTracesUnit
    case("ssd-trace-time-past-range", {"far.trace": "0 0 0 8 1\n100000000000000000 0 100 8 1\n", "wl.xml": workload(FAR_TRACE),
                                       "dev.xml": read("ssd/device.xml")}, ssd_run,
         ["far.trace:2", "arrival time 100000000000000000", "1e+08 s", "1e18 ps"]),
    case("ssd-trace-replays-past-range",
         {"half.trace": "600000000000000000 0 0 8 1\n", "dev.xml": read("ssd/device.xml"),
          "relay.xml": workload("<IO_Flow_Parameter_Set_Trace_Based><File_Path>half.trace</File_Path><Relay_Count>2"
                                "</Relay_Count><Time_Unit>PICOSECOND</Time_Unit></IO_Flow_Parameter_Set_Trace_Based>")},
         lambda p: ssd_run(p, wl="relay.xml"), ["half.trace:1", "replay 2 of <Relay_Count> 2", "1.2e+06 s"]),
    # SsdHostile.WorkPastTheBudgetIsRefusedBeforeItRuns
    case("ssd-work-requests", {"dev.xml": read("ssd/device.xml"),
                               "n.xml": workload(synthetic_flow("<Total_Requests_To_Generate>10000000000</Total_Requests_To_Generate>"))},
         lambda p: ssd_run(p, wl="n.xml"),
         ["n.xml: scenario 1", "estimated work, 10000000000 page transactions", "<Total_Requests_To_Generate> 10000000000",
          "budget of 67108864", "--max-transactions"]),
    case("ssd-work-stop-time", {"dev.xml": read("ssd/device.xml"),
                                "t.xml": workload(synthetic_flow("<Stop_Time>1000000000000000</Stop_Time>"))},
         lambda p: ssd_run(p, wl="t.xml"), ["t.xml", "estimated work", "<Stop_Time> 1000000000000000 ns at up to"]),
    case("ssd-work-bandwidth", {"dev.xml": read("ssd/device.xml"),
                                "b.xml": workload(synthetic_flow("<Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type>"
                                                                 "<Bandwidth>1000000000000</Bandwidth><Stop_Time>1000000000</Stop_Time>"))},
         lambda p: ssd_run(p, wl="b.xml"), ["b.xml", "estimated work", "<Bandwidth> 1000000000000 B/s", "2.441e+08 requests/s"]),
    case("ssd-work-trace-replays",
         {"dev.xml": read("ssd/device.xml"), "k.trace": "".join(f"{i * 1000} 0 {i * 8} 8 1\n" for i in range(1000)),
          "tr.xml": workload("<IO_Flow_Parameter_Set_Trace_Based><File_Path>k.trace</File_Path><Relay_Count>3"
                             "</Relay_Count></IO_Flow_Parameter_Set_Trace_Based>")},
         lambda p: ssd_run(p, wl="tr.xml", max_transactions=2000),
         ["3000 requests", "1000 trace requests x <Relay_Count> 3", "budget of 2000"]),
    # SsdHostile.ArrivalsFasterThanTheDeviceAreBoundedInMemory (refused during the run, 0.1 s in)
    case("ssd-arrivals-faster-than-the-device",
         {"dev.xml": read("ssd/device.xml"),
          "wl.xml": workload(synthetic_flow("<Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type>"
                                            "<Bandwidth>20000000000</Bandwidth><Stop_Time>2000000000</Stop_Time>"))},
         ssd_run, ["flow 0", "requests wait on the host", "<Bandwidth> 20000000000 B/s", "262144"]),
    # SsdHostile.HugeValuesAreCutInMessages
    case("ssd-device-huge-value", dict(WL, **{"dev.xml": device("Flash_Channel_Count", "7" * (10 << 20) + "x")}), ssd_run,
         ["dev.xml", "<Flash_Channel_Count>", "is not an integer", "(10485761 characters)"]),
    case("ssd-device-huge-element-name",
         dict(WL, **{"d2.xml": replaced(read("ssd/device.xml"), "<Seed>", "<" + "A" * (1 << 20) + "/><Seed>")}),
         lambda p: ssd_run(p, dev="d2.xml"), ["d2.xml", "unknown or unsupported element", "(1048576 characters)"]),
    # SsdHostile.AnIdPastTheDeviceNamesTheRange
    case("ssd-channel-id-past-the-device",
         {"dev.xml": read("ssd/device.xml"),
          "wl.xml": workload(synthetic_flow(SMALL_MIXED + "<Channel_IDs>0,1,2,3,4,5,6,7,8</Channel_IDs>"))},
         ssd_run, ["wl.xml", "<Channel_IDs> lists 8", "has 8 channels, numbered 0 to 7"]),
    case("ssd-plane-id-past-the-device",
         {"dev.xml": read("ssd/device.xml"), "wl2.xml": workload(synthetic_flow(SMALL_MIXED + "<Plane_IDs>0,2</Plane_IDs>"))},
         lambda p: ssd_run(p, wl="wl2.xml"), ["wl2.xml", "<Plane_IDs> lists 2", "2 planes per die, numbered 0 to 1"]),
    # SsdHostile.OptionsThatWouldDoNothingAreRefused (--mqsim-xml ''; --json '' is the function's own)
    case("ssd-mqsim-xml-empty", dict(WL, **{"dev.xml": read("ssd/device.xml")}), lambda p: ssd_run(p, mqsim_xml=""),
         ["--mqsim-xml", "an empty value"]),
    # SsdHostile.DeviceParametersAreTypedResolvedAndOverridable
    case("ssd-set-channels-0", dict(WL, **{"dev.xml": read("ssd/device.xml")}), lambda p: ssd_run(p, set={"ssd_device.channels": 0}),
         ["--set", "ssd_device.channels", "at least 1"]),
    case("ssd-set-misspelt-key", dict(WL, **{"dev.xml": read("ssd/device.xml")}), lambda p: ssd_run(p, set={"ssd_device.chanels": 4}),
         ["ssd_device.chanels", "unknown key", "channels"]),
    case("ssd-set-unknown-policy", dict(WL, **{"dev.xml": read("ssd/device.xml")}),
         lambda p: ssd_run(p, set={"ssd_device.gc_policy": "LRU"}),
         ["ssd_device.gc_policy", "'LRU'", "GREEDY"]),
    case("ssd-set-other-section", dict(WL, **{"dev.xml": read("ssd/device.xml")}), lambda p: ssd_run(p, set={"nand.x": 1}),
         ["nand", "ssd_device and ssd_model"]),
    # SsdHostile.AGcThresholdOfOneBlockIsRefused
    case("ssd-gc-threshold-one-block", dict(WL, **{"dev.xml": device("Block_No_Per_Plane", "256")}),
         lambda p: ssd_run(p, set={"ssd_device.gc_exec_threshold": 0.001, "ssd_device.gc_hard_threshold": 0}),
         ["dev.xml", "GC_Exec_Threshold 0.001", "= 1 free block", "at least 2"]),
    case("ssd-gc-threshold-small-drive", dict(WL, **{"dev.xml": device("Block_No_Per_Plane", "20")}), ssd_run,
         ["dev.xml", "GC_Exec_Threshold 0.05 x Block_No_Per_Plane 20"]),
    # SsdHostile.ATraceMustBeARegularFile
    case("ssd-trace-is-a-fifo", {"fifo": FIFO, "dev.xml": read("ssd/device.xml"), "wl.xml": lambda p: trace_xml(p("fifo"))}, ssd_run,
         ["fifo", "not a regular file"]),
    case("ssd-trace-is-a-directory", {"adir": DIR, "dev.xml": read("ssd/device.xml"), "wl.xml": lambda p: trace_xml(p("adir"))}, ssd_run,
         ["adir", "is a directory"]),
    # SsdHostile.ControlCharactersAreShownAndAbsentFlowElementsNamed
    case("ssd-trace-nul",
         {"nul.trace": "100 0 0 8 1\0\n", "dev.xml": read("ssd/device.xml"), "wl.xml": lambda p: trace_xml(p("nul.trace"))},
         ssd_run, ["nul.trace:1: type '1\\x00' is not a non-negative integer"]),

    # ---- tests/ssd/test_fio.cpp, SsdFioCli.RefusalsExitTwoNamingFileLineAndOption ----
    fio_case("rate-not-modelled", "[j]\nrw=randread\nrate=100m\n", ["job.fio:3:", "'rate'", "not modelled"]),
    fio_case("misspelt-option", "[j]\niodepht=4\n", ["job.fio:2:", "'iodepht'", "did you mean 'iodepth'"]),
    fio_case("size-past-the-drive", "[j]\nbs=4k\nsize=1p\n", ["job.fio:3:", "size=", "logical space"]),
    fio_case("bs-not-sectors", "[j]\nbs=3000\n", ["job.fio:2:", "multiple of 512"]),
    fio_case("unclosed-section", "[j\n", ["job.fio:1:"]),
    fio_case("number-ios-past-the-budget", "[j]\nrw=randread\nbs=4k\nnumber_ios=100000000\n", ["job.fio:4 number_ios=100000000", "budget"]),
    fio_case("runtime-past-the-budget", "[j]\nrw=randread\nbs=4k\niodepth=32\ntime_based\nruntime=1h\n",
             ["job.fio:6 runtime=1h", "budget"]),
    fio_case("max-transactions", "[j]\nnumber_ios=1000\n", ["--max-transactions"], max_transactions=10),
    fio_case("later-group-past-the-budget", "[a]\nnumber_ios=100\n[b]\nstonewall\nnumber_ios=100000000\n",
             ["group 2", "job.fio:5 number_ios"]),
    fio_case("occupancy-101", "[j]\nnumber_ios=10\n", ["--occupancy"], occupancy=101),
    fio_case("log-too-long", "[j]\nrw=randread\nbs=4k\nwrite_bw_log=x\nnumber_ios=5000000\n", ["job.fio:4:", "write_bw_log", "2^22"]),
]


def make_files(d, files):
    """Writes a case's files into the folder d: text (bytes as the C++ test writes them), DIR, FIFO, ("link", target),
    ("hardlink", target), or a function of p (for text that names another file of the folder)."""
    p = lambda name: os.path.join(d, name)  # noqa: E731
    for name, what in files.items():
        if callable(what):
            what = what(p)
        if what == DIR:
            os.mkdir(p(name))
        elif what == FIFO:
            os.mkfifo(p(name))
        elif isinstance(what, tuple):
            (os.symlink if what[0] == "link" else os.link)(p(what[1]), p(name))
        else:
            with open(p(name), "wb") as f:
                f.write(what.encode("latin-1"))
    return p


def snapshot(d):
    """What the folder holds: each name with its bytes (a folder or a named pipe as its kind)."""
    seen = {}
    for name in os.listdir(d):
        path = os.path.join(d, name)
        if os.path.isdir(path):
            seen[name] = "folder"
        elif not os.path.isfile(path):
            seen[name] = "other"
        else:
            with open(path, "rb") as f:
                seen[name] = f.read()
    return seen


@pytest.mark.parametrize("files,call,needles", HOSTILE_FILES)
def test_hostile_input_files_are_refused_naming_the_file(files, call, needles):
    with tempfile.TemporaryDirectory(prefix="bitline-hostile-") as d:
        p = make_files(d, files)
        before = snapshot(d)
        with pytest.raises(bitline.ConfigError) as e:
            call(p)
        message = str(e.value)
        for n in needles:
            assert n.replace("{dir}", d) in message, f"expected {n!r} in: {message[:2000]}"
        assert "internal error" not in message and "bad_alloc" not in message, message
        assert len(message) < 4000, f"the message repeats the input: {message[:500]}"
        assert snapshot(d) == before, "a file was changed or a result left behind"


def test_the_interpreter_survives_every_hostile_input_file():
    """After every refused file above (run first, in this interpreter), a run is the run of a fresh one."""
    assert len(HOSTILE_FILES) >= 100
    assert bitline.serve.run(**SERVE)["summary"]["requests"] == 200
