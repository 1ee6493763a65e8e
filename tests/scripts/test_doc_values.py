"""scripts/doc_values.py (issue 56): the figures that README.md and docs/*.md repeat from generated tables, marked
`<!--v:NAME-->value<!--/v-->`, agree with those tables; a hand-edited figure, an unknown or unused NAME and a
malformed mark fail; `write` puts the generated figure back. The CSV column lists are checked against a stand-in
program here (the real one in `make doc-commands`). Run by ctest (Scripts.PlotPy); no C++ needed.
"""
import os
import re
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The program, for the figures of example runs: $BITLINE (`make doc-commands` runs the test that needs it with the
# built program; ctest, which runs the rest, does not: it would add its ~15 s of commands to every `make test`).
BITLINE = os.environ.get("BITLINE", "")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_values  # noqa: E402


@pytest.fixture
def copy(tmp_path):
    """A copy of README.md and docs/*.md to edit."""
    shutil.copy(os.path.join(ROOT, "README.md"), tmp_path / "README.md")
    os.mkdir(tmp_path / "docs")
    for f in os.listdir(os.path.join(ROOT, "docs")):
        if f.endswith(".md"):
            shutil.copy(os.path.join(ROOT, "docs", f), tmp_path / "docs" / f)
    return tmp_path


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def first_mark(root, name):
    """(file, value) of the first mark of `name`."""
    for path, _, n, value, _ in doc_values.marks(str(root))[0]:
        if n == name:
            return root / path, value
    raise AssertionError(f"{name} is marked nowhere")


def append_zero(copy, marks):
    """Writes a 0 after each marked figure of `marks` (doc_values.marks' rows) in the docs under `copy`."""
    by_file = {}
    for path, n, name, value, span in marks:
        by_file.setdefault(path, []).append((span, value))
    for path, spans in by_file.items():
        text = (copy / path).read_text()
        for (a, b), value in sorted(spans, reverse=True):
            text = text[:a] + value + "0" + text[b:]
        (copy / path).write_text(text)


def test_the_docs_agree_with_their_generated_tables():
    assert doc_values.check(ROOT) == []


def test_every_registered_name_is_marked_and_every_mark_is_registered():
    names = {m[2] for m in doc_values.marks(ROOT)[0]}
    assert names == set(doc_values.VALUES)


def test_a_hand_edited_figure_fails_and_write_puts_the_generated_one_back(copy):
    path, value = first_mark(copy, "llama-csix8-batch")
    edit(path, f"<!--v:llama-csix8-batch-->{value}<!--/v-->", "<!--v:llama-csix8-batch-->80<!--/v-->")
    problems = doc_values.check(str(copy))
    assert len(problems) == 1 and "llama-csix8-batch is '80' here but '78'" in problems[0]
    assert doc_values.write(str(copy)) == []
    assert (copy / "README.md").read_text() == open(os.path.join(ROOT, "README.md")).read()


def test_a_changed_generated_table_fails_until_written(copy):
    # The model moved: make validate rewrote the table; the prose still says 78.
    edit(copy / "README.md", "| Llama-405B 15K/6K 8xCSI @50ms, full step | - | 78 |",
         "| Llama-405B 15K/6K 8xCSI @50ms, full step | - | 77 |")
    assert any("llama-csix8-batch is '78' here but '77'" in p for p in doc_values.check(str(copy)))
    assert doc_values.write(str(copy)) == []
    assert "fits <!--v:llama-csix8-batch-->77<!--/v-->" in (copy / "README.md").read_text()


def test_every_marked_figure_is_checked(copy):
    """Every marked figure read from a generated table, changed, fails the check (none is read from somewhere that
    cannot disagree); those of example runs are in the tests of Run below."""
    marks = [m for m in doc_values.marks(str(copy))[0] if not isinstance(doc_values.VALUES[m[2]][1], doc_values.Columns)
             and not doc_values.of_run(m[2])]
    assert marks
    append_zero(copy, marks)
    problems = doc_values.check(str(copy))
    for path, n, name, value, _ in marks:
        assert any(p.startswith(f"{path}:{n}: {name} is '{value}0' here") for p in problems), name
    assert len(problems) == len(marks)


def test_an_unknown_name_an_unused_name_and_a_malformed_mark_fail(copy, monkeypatch):
    edit(copy / "docs" / "llm.md", "# ", "<!--v:no-such-figure-->1.00x<!--/v--> ")
    edit(copy / "docs" / "cosmos.md", "# ", "<!--v:llama-csix8-batch-->78 ")
    monkeypatch.setitem(doc_values.VALUES, "never-marked", doc_values.VALUES["llama-csix8-batch"])
    problems = "\n".join(doc_values.check(str(copy)))
    assert "unknown value name 'no-such-figure'" in problems
    assert "'never-marked' is registered but marked nowhere" in problems
    assert "docs/cosmos.md: a mark without its end" in problems


def test_a_mark_in_a_code_block_fails(copy):
    edit(copy / "docs" / "llm.md", "```sh\n", "```sh\n# <!--v:llama-csix8-batch-->78<!--/v-->\n")
    assert any("inside a code block" in p for p in doc_values.check(str(copy)))


def test_a_source_that_is_gone_fails(copy):
    text = (copy / "README.md").read_text()
    (copy / "README.md").write_text(re.sub(r"<!-- GENERATED headline.*?END GENERATED headline -->", "", text, flags=re.S))
    assert any("no GENERATED block 'headline'" in p for p in doc_values.check(str(copy)))


def test_column_lists_against_a_csv_header(tmp_path):
    """The CSV check with a stand-in program that writes a header where the real one writes its CSV."""
    fake = tmp_path / "bitline"
    fake.write_text('#!/bin/sh\nfor a; do last=$a; done\n'
                    'echo "rate_per_s,ttft_ms.p50,ttft_ms.p99,preemptions,cached_tokens" > "$last"\n')
    fake.chmod(0o755)
    cols = doc_values.Columns("serve", "sweep", "--csv", "{csv}")
    header = cols.header(str(fake))
    assert header == ["rate_per_s", "ttft_ms.p50", "ttft_ms.p99", "preemptions", "cached_tokens"]
    assert doc_values.Columns.differ("`rate_per_s`, then `ttft_ms.*`, `preemptions` and `cached_tokens`", header) is None
    assert "undocumented columns: cached_tokens" in doc_values.Columns.differ("`rate_per_s`, `ttft_ms.*`, `preemptions`", header)
    assert "`e2e_ms.*` matches no column" in doc_values.Columns.differ("`rate_per_s`, `ttft_ms.*`, `e2e_ms.*`", header)
    assert "`energy_j` documented where the CSV has preemptions" in doc_values.Columns.differ(
        "`rate_per_s`, `ttft_ms.*`, `energy_j`, `preemptions`, `cached_tokens`", header)


def test_the_column_lists_are_checked_against_the_program_when_one_is_given(copy, tmp_path):
    fake = tmp_path / "bitline"
    fake.write_text('#!/bin/sh\nfor a; do last=$a; done\ncase "$last" in *.csv) echo "id,arrival_s" > "$last";; esac\n')
    fake.chmod(0o755)
    problems = doc_values.check(str(copy), str(fake))
    assert any("serve-requests-csv: the documented columns differ" in p for p in problems)
    assert any("serve-sweep-csv: the documented columns differ" in p for p in problems)


# ---- figures of example runs: a mark registered with Run(ARGS) is read from what `bitline ARGS` prints

SERVE = doc_values.Run("serve", "run", "--model", "llama2-7b", "--system", "h100x1")


def stand_in(tmp_path, ttft):
    """A program that prints a `serve run` summary with the given mean TTFT, and the arguments it was given."""
    fake = tmp_path / "bitline"
    fake.write_text(f'#!/bin/sh\necho "args: $*"\necho "  TTFT       mean {ttft}  p50      11.64 ms"\n')
    fake.chmod(0o755)
    return str(fake)


def with_run_mark(copy, monkeypatch, value):
    """A copy whose docs/serving.md gives a mean TTFT of `value` from SERVE, registered as `ex-ttft`."""
    monkeypatch.setitem(doc_values.VALUES, "ex-ttft", (SERVE, doc_values.field("TTFT", "mean", at=2)))
    edit(copy / "docs" / "serving.md", "# ", f"A mean TTFT of <!--v:ex-ttft-->{value}<!--/v--> ms. # ")


def test_a_figure_of_an_example_run_is_read_from_its_commands_output(copy, tmp_path, monkeypatch):
    with_run_mark(copy, monkeypatch, "12.53")
    fake = stand_in(tmp_path, "12.53")
    assert [p for p in doc_values.check(str(copy), fake) if "ex-ttft" in p] == []
    assert doc_values.VALUES["ex-ttft"][0].output(fake).startswith("args: serve run --model llama2-7b --system h100x1")


def test_a_hand_edited_figure_of_an_example_run_fails_and_write_with_the_program_puts_it_back(copy, tmp_path,
                                                                                            monkeypatch):
    with_run_mark(copy, monkeypatch, "12.60")
    fake = stand_in(tmp_path, "12.53")
    problems = [p for p in doc_values.check(str(copy), fake) if "ex-ttft" in p]
    assert len(problems) == 1 and "ex-ttft is '12.60' here but '12.53' in `bitline serve run --model llama2-7b" in problems[0]
    assert "doc_values.py write BITLINE` rewrites it" in problems[0]
    # Without the program it is not checked (ctest), and write leaves it.
    assert not any("ex-ttft" in p for p in doc_values.check(str(copy)))
    doc_values.write(str(copy))
    assert "<!--v:ex-ttft-->12.60<!--/v-->" in (copy / "docs" / "serving.md").read_text()
    # With it, write puts the printed figure in (the make targets pass the program).
    doc_values.write(str(copy), fake)
    assert "<!--v:ex-ttft-->12.53<!--/v-->" in (copy / "docs" / "serving.md").read_text()


def test_a_command_that_fails_or_prints_no_such_line_fails(copy, tmp_path, monkeypatch):
    with_run_mark(copy, monkeypatch, "12.53")
    broken = tmp_path / "broken"
    broken.write_text('#!/bin/sh\necho "bitline: config error: no such model" >&2\nexit 2\n')
    broken.chmod(0o755)
    problems = [p for p in doc_values.check(str(copy), str(broken)) if "ex-ttft" in p]
    assert len(problems) == 1 and "exit 2: bitline: config error: no such model" in problems[0]
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\necho nothing\n")
    silent.chmod(0o755)
    problems = [p for p in doc_values.check(str(copy), str(silent)) if "ex-ttft" in p]
    assert len(problems) == 1 and "0 lines starting 'TTFT mean'" in problems[0]


def test_json_at_and_field():
    text = '{"summary": {"ttft_ms": {"mean": 12.53}}, "points": [{"batch": 7}]}'
    assert doc_values.json_at("summary.ttft_ms.mean")(text) == "12.53"
    assert doc_values.json_at("points.0.batch", lambda v: f"{v:,}")(text) == "7"
    with pytest.raises(LookupError):
        doc_values.json_at("summary.tpot_ms")(text)
    out = "speedup\nfc/isp  227  2.37\nenergy\nfc/isp  26.7  2.08\n"
    assert doc_values.field("fc/isp", at=1, after=r"energy")(out) == "26.7"
    with pytest.raises(LookupError):
        doc_values.field("fc/isp", at=1)(out)  # two such lines and no `after` to choose


@pytest.mark.skipif(not os.access(BITLINE, os.X_OK), reason="needs the program: BITLINE=... (make doc-commands runs it)")
def test_every_figure_of_an_example_run_agrees_with_the_program_and_fails_when_changed(copy):
    """With the real program, every figure of an example run changed: each fails the check (every registered command
    and pattern reads a figure that can disagree) and nothing else does (the docs agree with the program). One check,
    every command once: ~10-20 s."""
    marks = [m for m in doc_values.marks(str(copy))[0] if doc_values.of_run(m[2])]
    assert marks
    append_zero(copy, marks)
    problems = doc_values.check(str(copy), BITLINE)
    for path, n, name, value, _ in marks:
        assert any(p.startswith(f"{path}:{n}: {name} is '{value}0' here") for p in problems), name
    assert len(problems) == len(marks), "\n".join(problems)
