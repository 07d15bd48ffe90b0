"""The GitHub Actions YAML examples of the docs, as workflow files actionlint can check.

Usage: python3 .ci/doc_workflows.py OUT_DIR FILE.md...

Every ```yaml block that is a workflow (`jobs:`), a job's `steps:`, or a list of steps (`- uses:`
or `- run:` items) is written to OUT_DIR as a workflow file (the partial ones wrapped in a
minimal workflow); their paths are printed, one per line. A block whose `run:` holds `${{ }}`
fails here: the docs' own rule is to pass such values through `env:`.
"""

import pathlib
import re
import sys


def blocks(text):
    for m in re.finditer(r"^```ya?ml\n(.*?)^```", text, re.S | re.M):
        yield text[: m.start()].count("\n") + 1, m.group(1)


def first_line(block):
    for line in block.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return ""


def wrap(block):
    head = first_line(block)
    if re.match(r"^(name|on|jobs):", head) and "jobs:" in block:
        return block if re.search(r"^on:", block, re.M) else "on: push\n" + block
    if head.startswith("steps:"):
        body = block
    elif re.match(r"^- (uses|run|name|id):", head):
        body = "steps:\n" + block
    else:
        return None
    inner = "".join("    " + l if l.strip() else l for l in body.splitlines(True))
    return "on: push\njobs:\n  doc:\n    runs-on: ubuntu-latest\n" + inner


def run_with_expressions(block):
    """`run:` scripts that hold `${{ }}`: (line offset, text)."""
    lines = block.splitlines()
    bad = []
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)(- )?run:\s*(.*)$", line)
        if not m:
            continue
        indent = len(m.group(1)) + (2 if m.group(2) else 0)
        script = [m.group(3)]
        for nxt in lines[i + 1 :]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            script.append(nxt)
        if any("${{" in s for s in script):
            bad.append((i, line.strip()))
    return bad


def main():
    out = pathlib.Path(sys.argv[1])
    problems = 0
    for name in sys.argv[2:]:
        text = pathlib.Path(name).read_text()
        for line, block in blocks(text):
            wf = wrap(block)
            if wf is None:
                continue
            for off, shown in run_with_expressions(block):
                print(f"{name}:{line + 1 + off}: `${{{{ }}}}` inside run: ({shown}); pass it through env:", file=sys.stderr)
                problems += 1
            path = out / f"{pathlib.Path(name).stem}-{line}.yml"
            path.write_text(wf)
            print(path)
    sys.exit(1 if problems else 0)


main()
