#!/usr/bin/env python3
"""The house's size limits (issue 52), checked on the sources as clang-format leaves them.

    scripts/check_house.py [SRC_DIR]        # default: src/ beside this script; exit 1 listing every breach

Limits:
  - a file under src/ has at most 800 lines, one under src/cli at most 400;
  - a function body (from its signature to its closing brace) at most 120 lines, parameter declarations excepted
    (a `visit(V& v)` template lists a component's parameters, one entry each);
  - a class or struct at most 45 data members, parameter structs excepted (those with a visit() member).

The C++ is read by brace matching, not parsed: comments, string and character literals are blanked first; a function
is a `{` that ends a signature (a `(...)` not of a control statement, a lambda or an initializer) at any depth; a data
member is a declaration ending in `;` at the top level of a class body, with no `(` before its initializer, counted
once per declarator (`int a = 0, b = 0;` is two).
"""
import os
import re
import sys

FILE_LIMIT, CLI_FILE_LIMIT, FUNCTION_LIMIT, MEMBER_LIMIT = 800, 400, 120, 45

CONTROL = re.compile(r"^\s*(?:\}\s*)?(if|for|while|switch|else|do|try|catch|return|case|default)\b")
TYPE_HEAD = re.compile(r"^\s*(?:template\s*<.*>\s*)?(class|struct|union)\s+(\w+)[^;(]*\{\s*$")
NOT_MEMBER = re.compile(r"^\s*(using|friend|typedef|static_assert|template|enum|class|struct|union|public|private|protected)\b")


def blank(text):
    """The text with comments and string/character literals replaced by spaces (line breaks kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' and i > 0 and text[i - 1] == "R" and "(" in text[i:i + 18]:  # a raw string R"d(...)d"
            d = text[i + 1:text.index("(", i)]
            j = text.find(")" + d + '"', i)
            j = n if j < 0 else j + len(d) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('"' + " " * (j - i - 1) + '"')
            i = j + 1
        elif c == "'" and not (i > 0 and text[i - 1].isalnum()):  # (a digit separator 1'000 is not a literal)
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append("'" + " " * (j - i - 1) + "'")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def statement_before(lines, i):
    """The statement that ends with line i's `{`: line i and the lines above it back to the previous `;`, `{` or `}`."""
    j, parts = i, [lines[i]]
    while j > 0:
        prev = lines[j - 1].rstrip()
        if not prev.strip() or prev.endswith((";", "{", "}")) or prev.lstrip().startswith("#"):
            break
        j -= 1
        parts.insert(0, lines[j])
    return j, " ".join(p.strip() for p in parts)


def closing(lines, i):
    """The line of the `}` matching the first `{` at or after line i."""
    depth, started = 0, False
    for k in range(i, len(lines)):
        for ch in lines[k]:
            if ch == "{":
                depth += 1
                started = True
            elif ch == "}":
                depth -= 1
                if started and depth == 0:
                    return k
    return len(lines) - 1


def is_function_head(stmt):
    head = stmt.rstrip("{ ").strip()
    if "(" not in head or CONTROL.match(head) or TYPE_HEAD.match(stmt):
        return False
    before_paren = head.split("(", 1)[0]
    if "=" in before_paren or "[" in before_paren or head.startswith(("namespace", "extern")):
        return False  # an initializer, a lambda, a namespace
    if re.search(r"\]\s*(\(.*\))?\s*(mutable\s*)?(->\s*[\w:<>]+\s*)?$", head):
        return False  # a lambda's head ending the line
    return bool(re.match(r"^[\w:~<>,*&\s\[\]]*\w[\w:~<>]*\s*\(", head)) or "operator" in head


def functions(lines):
    """(first line, lines, head) of every function body in `lines` (blanked)."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].rstrip().endswith("{"):
            j, stmt = statement_before(lines, i)
            if is_function_head(stmt):
                k = closing(lines, i)
                out.append((j + 1, k - j + 1, re.sub(r"\s+", " ", stmt)[:100]))
                i = k + 1
                continue
        i += 1
    return out


def declarators(decl):
    """How many variables one member declaration declares: its top-level commas before any initializer, plus one."""
    depth, count = 0, 1
    for ch in decl:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


def classes(lines):
    """(first line, name, data members, has visit()) of every class or struct body in `lines` (blanked)."""
    out = []
    for i, line in enumerate(lines):
        m = TYPE_HEAD.match(line)
        if not m:
            continue
        end = closing(lines, i)
        depth, members, visit = 0, 0, False
        stmt = ""
        for k in range(i, end + 1):
            text = lines[k]
            if depth == 1 and re.search(r"\bvisit\s*\(", text):
                visit = True
            if depth == 1:
                stmt += " " + text.strip()
            for ch in text:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
            if depth == 1 and stmt.strip().endswith(";"):
                s = stmt.strip()
                body = re.split(r"[={]", s, maxsplit=1)[0]
                s_clean = re.sub(r"^(public|private|protected)\s*:", "", s).strip()
                if not NOT_MEMBER.match(s_clean) and "(" not in body and "operator" not in body and s_clean != ";":
                    members += declarators(s_clean.rstrip(";"))
                stmt = ""
            elif depth != 1 or text.rstrip().endswith(("{", "}")) or text.strip().endswith(":"):
                stmt = ""
        out.append((i + 1, m.group(2), members, visit))
    return out


def check(src):
    breaches = []
    for root, _, names in sorted(os.walk(src)):
        for name in sorted(names):
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, os.path.dirname(os.path.abspath(src)))
            with open(path, encoding="utf-8") as f:
                text = f.read()
            n = text.count("\n")
            limit = CLI_FILE_LIMIT if os.sep + "cli" + os.sep in os.sep + os.path.relpath(path, src) else FILE_LIMIT
            if n > limit:
                breaches.append(f"{rel}: {n} lines (at most {limit})")
            lines = blank(text).split("\n")
            for first, length, head in functions(lines):
                if length > FUNCTION_LIMIT and not re.search(r"\bvisit\s*\(\s*V\s*&", head):
                    breaches.append(f"{rel}:{first}: a function of {length} lines (at most {FUNCTION_LIMIT}): {head}")
            for first, cname, members, visit in classes(lines):
                if members > MEMBER_LIMIT and not visit:
                    breaches.append(f"{rel}:{first}: {cname} has {members} data members (at most {MEMBER_LIMIT})")
    return breaches


def main(argv):
    src = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if not os.path.isdir(src):
        print(f"check_house.py: {src}: not a directory", file=sys.stderr)
        return 2
    breaches = check(src)
    for b in breaches:
        print(b)
    if breaches:
        print(f"{len(breaches)} breaches of the house's limits (scripts/check_house.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
