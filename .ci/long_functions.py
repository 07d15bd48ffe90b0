#!/usr/bin/env python3
"""No function longer than 150 lines, anywhere in the workspace, outside an exhaustive `match`.

Reads every `.rs` file of the root package (`src/`, `tests/`, `benches/`) and of each crate
under `crates/` (its `src/`, `tests/`, `benches/`). Comments, string literals (plain, byte and
raw) and character literals are blanked first, keeping every line break, so a brace inside
text or a comment never counts. Each `fn` with a body is then measured from the line of its
`fn` keyword to the line of the brace that closes its body (a nested `fn` is measured on its
own too, and counts inside the function that holds it).

A function is allowed past the limit when its body is essentially one `match`: the body holds
a `match` expression at its top level (not inside a closure or a block), and the lines of the
body outside that `match` are at most `MATCH_SLACK` (a few `let` bindings before it, a
conversion after it). Such a function is a table of cases that reads one arm at a time;
anything else over the limit is split into named steps, and data becomes data (a `const`
table, not code).

Exits 1 listing each offender as `path:line: name (N lines)`; prints one summary line
otherwise.
"""

import os
import re
import sys

LIMIT = 150
MATCH_SLACK = 8
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
FN = re.compile(r"\bfn\s+(" + IDENT + r")")
MATCH = re.compile(r"\bmatch\b")


def blank(text):
    """The text with comments and literals replaced by spaces, line breaks kept."""
    out, i, n = [], 0, len(text)

    def keep_lines(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_lines(text[i:j]))
            i = j
        elif re.match(r'(?:b|c)?r(#*)"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(?:b|c)?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('"' + keep_lines(text[i + 1:j - 1]) + '"')
            i = j
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (2 if c != '"' else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            out.append('"' + keep_lines(text[i + 1:j - 1]) + '"')
            i = j
        elif c == "'":
            # A character literal ('x', '\n', '\u{1F600}', '{') or a lifetime ('a).
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                j = n if j < 0 else j + 1
                out.append(" " * (j - i))
                i = j
            elif i + 2 < n and text[i + 2] == "'":
                out.append("   ")
                i += 3
            elif i + 1 < n and ord(text[i + 1]) > 127:
                j = text.find("'", i + 1)
                j = n if j < 0 else j + 1
                out.append(" " * (j - i))
                i = j
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def body_open(code, start):
    """The index of the `{` that opens the body of the fn whose name ends at `start`, or None."""
    depth = 0
    i = start
    while i < len(code):
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == ";":
            return None
        elif depth == 0 and c == "{":
            return i
        i += 1
    return None


def close_of(code, open_at):
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(code) - 1


def line_of(code, i):
    return code.count("\n", 0, i) + 1


def one_match(code, open_at, close_at):
    """Whether the body between the braces is essentially one top-level `match`."""
    body_lines = line_of(code, close_at) - line_of(code, open_at) - 1
    depth, i = 0, open_at + 1
    while i < close_at:
        c = code[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif depth == 0:
            m = MATCH.match(code, i)
            if m and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
                block = code.find("{", m.end())
                if block < 0 or block > close_at:
                    return False
                end = close_of(code, block)
                inside = line_of(code, end) - line_of(code, i) + 1
                if body_lines - inside <= MATCH_SLACK:
                    return True
                i = end
        i += 1
    return False


def files(root):
    tops = [root] + [os.path.join(root, "crates", d) for d in sorted(os.listdir(os.path.join(root, "crates")))]
    for top in tops:
        for sub in ("src", "tests", "benches"):
            base = os.path.join(top, sub)
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith(".rs"):
                        yield os.path.join(dirpath, f)


def long_functions(path):
    with open(path, encoding="utf-8") as fh:
        code = blank(fh.read())
    for m in FN.finditer(code):
        open_at = body_open(code, m.end())
        if open_at is None:
            continue
        close_at = close_of(code, open_at)
        first, last = line_of(code, m.start()), line_of(code, close_at)
        length = last - first + 1
        if length > LIMIT and not one_match(code, open_at, close_at):
            yield first, m.group(1), length


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    offenders, count = [], 0
    for path in files(root):
        count += 1
        for line, name, length in long_functions(path):
            offenders.append(f"{os.path.relpath(path, root)}:{line}: {name} ({length} lines)")
    if offenders:
        print(f"functions over {LIMIT} lines (split them, or make the data a table):", file=sys.stderr)
        for o in offenders:
            print("  " + o, file=sys.stderr)
        sys.exit(1)
    print(f"long_functions: no function over {LIMIT} lines outside one match ({count} files)")


if __name__ == "__main__":
    main()
