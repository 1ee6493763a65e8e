"""scripts/check_house.py: the house's limits (issue 52) found in synthetic sources, and none missed or invented."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import check_house  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_house.py")


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def function(name, body_lines):
    return f"int {name}(int x) {{\n" + "".join(f"  x += {i};\n" for i in range(body_lines)) + "  return x;\n}\n"


def run(src):
    p = subprocess.run([sys.executable, SCRIPT, str(src)], capture_output=True, text=True)
    return p.returncode, p.stdout


def test_a_clean_tree_passes(tmp_path):
    write(tmp_path, "a/ok.cpp", function("short_one", 100))
    assert run(tmp_path) == (0, "")


def test_a_long_function_is_found_and_a_parameter_visit_is_not(tmp_path):
    # 119 body lines + the signature, the return and the brace: 122 lines
    write(tmp_path, "a/long.cpp", "// a { in a comment\nconst char* s = \"}\";\n" + function("too_long", 119))
    visit = "struct P {\n  int a = 0;\n  template <class V> void visit(V& v) {\n" + "    v(a);\n" * 300 + "  }\n};\n"
    write(tmp_path, "a/params.hpp", visit)
    rc, out = run(tmp_path)
    assert rc == 1
    assert "long.cpp:3: a function of 122 lines" in out and "too_long" in out
    assert "params.hpp" not in out


def test_a_lambda_counts_in_its_function_not_as_one(tmp_path):
    body = "  auto f = [&](int y) {\n" + "    y += 1;\n" * 130 + "    return y;\n  };\n"
    write(tmp_path, "a/lambda.cpp", "int outer(int x) {\n" + body + "  return f(x);\n}\n")
    rc, out = run(tmp_path)
    assert rc == 1 and out.count("a function of") == 1 and "outer" in out


def test_files_over_their_folders_limits(tmp_path):
    write(tmp_path, "cli/big.cpp", "int a;\n" * 401)
    write(tmp_path, "llm/big.cpp", "int a;\n" * 801)
    write(tmp_path, "llm/fine.cpp", "int a;\n" * 800)
    rc, out = run(tmp_path)
    assert rc == 1
    assert "cli/big.cpp: 401 lines (at most 400)" in out
    assert "llm/big.cpp: 801 lines (at most 800)" in out
    assert "fine.cpp" not in out


def test_data_members_are_counted_per_declarator(tmp_path):
    members = "".join(f"  int m{i} = 0, n{i} = 1;\n" for i in range(23))  # 46 members
    methods = "  int get() const { return m0; }\n  void set(int v);\n  using T = int;\n"
    write(tmp_path, "a/wide.hpp", "class Wide {\n public:\n" + methods + members + "};\n")
    write(tmp_path, "a/narrow.hpp", "struct Narrow {\n" + "".join(f"  int m{i} = 0;\n" for i in range(45)) + "};\n")
    params = "struct Params {\n" + "".join(f"  int m{i} = 0;\n" for i in range(60)) + "  template <class V> void visit(V& v) { v(m0); }\n};\n"
    write(tmp_path, "a/params.hpp", params)
    rc, out = run(tmp_path)
    assert rc == 1
    assert "wide.hpp:1: Wide has 46 data members (at most 45)" in out
    assert "Narrow" not in out and "Params" not in out


def test_the_counters_directly():
    lines = check_house.blank("struct S {\n  std::pair<int, int> p{1, 2};\n  int a, b;\n  void f(int, int);\n};\n").split("\n")
    assert check_house.classes(lines) == [(1, "S", 3, False)]
