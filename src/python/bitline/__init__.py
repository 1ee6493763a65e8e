"""bitline from Python: the same runs, the same results and the same errors as the command line (docs/python.md).

Each function runs one command in-process, with keyword arguments for its options, and returns the dict its
`--json` file holds (the same keys and values):

    import bitline
    r = bitline.serve.run(model="llama3.1-70b", system="h100x8", rate=6, input=800, output=200, requests=500)
    r["summary"]["ttft_ms"]["p50"]

A keyword is the option without its dashes, `-` written `_` (max_concurrency=4 is --max-concurrency 4); True is a
flag, a list is comma-joined (rates=[1, 5, 20]), set={"llm.compute.kernel_overhead": "3us"} is one --set each,
vary={"hbf.stacks": [4, 6]} one --vary each. Bad input raises bitline.ConfigError (a ValueError) with the message
the program prints; a run with no feasible result raises bitline.ModelError. The runs release the GIL, so threads
run them in parallel; each run is independent of the others (no state is kept between them).

progress=callback (any function) is called as callback(done, total, what) with each progress report of the run,
instead of the report the program prints on stderr: done of total units (a sweep's points, an evaluation's runs, an
SSD run's requests), non-decreasing. An exception it raises stops the run and is raised by the function.
"""
import json
import os
import shutil
import tempfile
import threading

from . import _bitline
from ._bitline import ConfigError, ModelError

__all__ = ["ConfigError", "ModelError", "describe", "command", "to_dataframe", "serve", "accel", "cosmos", "ssd", "hbf"]

_capture = threading.Lock()  # describe() reads what the program prints: one at a time


def _text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _arguments(words, options):
    args = list(words)
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if key in ("set", "vary"):
            pairs = value.items() if isinstance(value, dict) else (str(v).split("=", 1) for v in value)
            for k, v in pairs:
                v = ",".join(_text(x) for x in v) if isinstance(v, (list, tuple)) else _text(v)
                args += [flag, f"{k}={v}"]
        elif value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(_text(v) for v in value)]
        else:
            args += [flag, _text(value)]
    return args


def command(*words, per_request=False, progress=None, **options):
    """Runs `bitline WORDS... --OPTION VALUE...` and returns its --json result as a dict. per_request=True (serve run)
    adds the per-request records (`--requests-out`) as result["requests"], a list of dicts. progress=callback is
    called as callback(done, total, what) with each progress report (instead of printing it); what it raises stops
    the run and is raised here."""
    for own in ("json", "requests_out"):
        if own in options:
            raise ConfigError(f"{own}: the result is returned (per_request=True for the per-request records); give no file")
    if progress is not None and not callable(progress):
        raise TypeError("progress: a callable, progress(done, total, what), or None")
    with tempfile.TemporaryDirectory(prefix="bitline-") as tmp:
        out = os.path.join(tmp, "result.json")
        records = os.path.join(tmp, "requests.jsonl")
        _bitline.run(_arguments(words, options) + ["--json", out] + (["--requests-out", records] if per_request else []),
                     False, progress)
        # other files the command wrote beside its --json (fio's write_*_log): to the current folder, where the
        # program writes them without --json
        for name in sorted(os.listdir(tmp)):
            if name not in ("result.json", "requests.jsonl"):
                shutil.move(os.path.join(tmp, name), os.path.join(os.getcwd(), name))
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
        if per_request:
            with open(records, encoding="utf-8") as f:
                result["requests"] = [json.loads(line) for line in f if line.strip()]
        return result


def to_dataframe(result):
    """A result's table as a pandas DataFrame (pandas is optional, not a dependency of bitline): its per-request
    records (per_request=True), else its points (sweeps, evaluations), one row each with nested keys dotted."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("bitline.to_dataframe needs pandas (Debian: python3-pandas); the result itself is a dict") from e
    rows = result.get("requests") or result.get("points")
    if rows is None:
        raise ConfigError("to_dataframe: the result has neither per-request records (per_request=True) nor points")
    return pandas.json_normalize(rows, sep=".")


def describe(section=None):
    """The parameters (of a section, e.g. "llm.compute", or all) as a list of dicts: key, default, type, range,
    description, source (`bitline describe --json`)."""
    with _capture:
        text = _bitline.run(["describe"] + ([section] if section else []) + ["--json"], True)
    return json.loads(text)


class _Family:
    """The commands of one family (bitline.serve.run, ...), each a function of keyword options; `positional` names
    the keywords that are a command's positional arguments, in order (ssd fio's JOBFILE: jobfile=)."""

    def __init__(self, name, commands, positional=None):
        self._name = name
        self._positional = positional or {}
        for c in commands:
            setattr(self, c.replace("-", "_"), self._command(c))

    def _command(self, c):
        def run(per_request=False, progress=None, **options):
            words = [self._name, c]
            for key in self._positional.get(c, ()):
                if options.get(key) is None:
                    raise ConfigError(f"bitline.{self._name}.{c.replace('-', '_')}: {key}= is required")
                words.append(str(os.fspath(options.pop(key))))
            return command(*words, per_request=per_request, progress=progress, **options)
        run.__name__ = c.replace("-", "_")
        run.__doc__ = f"`bitline {self._name} {c}` with keyword options; returns its --json result (`bitline {self._name} {c} --help`)."
        return run

    def __repr__(self):
        return f"<bitline.{self._name}>"


serve = _Family("serve", ["run", "sweep", "capacity"])
accel = _Family("accel", ["run", "eval", "ablation", "sessions", "sweep", "gemm", "attention", "collective"])
cosmos = _Family("cosmos", ["run", "eval", "ssb", "write-bw"])
ssd = _Family("ssd", ["run", "fio"], positional={"fio": ("jobfile",)})
hbf = _Family("hbf", ["area", "stream"])
