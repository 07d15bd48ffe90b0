#!/usr/bin/env python3
"""Regenerate link/symbol-order.txt, the order of the functions a run executes.

The release build of `runner` (x86_64 Linux, linked by the toolchain's rust-lld, see build.rs)
places the functions listed in link/symbol-order.txt first in `.text`, in that order. A run
then touches a few contiguous megabytes of code instead of pages spread over all of it, and
the kernel's fault-around (64 KiB around each touched page) maps in less of the binary.

The list comes from two profiles of the 20-turn session benchmark (`cargo bench --bench macro
-- session`, or the benchmarks named on the command line):

1. one run under callgrind, which reports every function that executed; these are listed by
   instructions executed, most first, so the hottest code shares pages too;
2. when `perf` is installed, three native runs recording every page fault with its address
   (`perf record -e page-faults -c 1 -d`): code that runs natively but not under valgrind
   (CPU-feature paths, thread timing, the sandbox's forked helpers) faults on the function it
   is in; those functions follow.

Usage: python3 scripts/symbol-order.py [BENCH ...]   (default: session)
Needs valgrind (and perf for the second pass). Symbol names follow the code: regenerate after
larger changes (stale names are ignored by the linker; the build stays correct, only the
ordering degrades).
"""

import bisect
import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "link" / "symbol-order.txt"


def bench(benches, runs, wrap):
    env = dict(os.environ, BENCH_RUNS=str(runs), BENCH_WRAP=wrap)
    subprocess.run(
        ["cargo", "bench", "--locked", "--bench", "macro", "--", *benches],
        cwd=ROOT,
        env=env,
        check=True,
    )


def profile(benches, tmp):
    wrap = (
        "valgrind --tool=callgrind --dump-instr=no --compress-strings=no "
        f"--compress-pos=no --demangle=no --callgrind-out-file={tmp}/cg.%p"
    )
    bench(benches, 1, wrap)
    files = sorted(pathlib.Path(tmp).glob("cg.*"))
    if not files:
        sys.exit("callgrind wrote no profile")
    return files


def faulted(benches, tmp):
    """Functions of the runner binary that page faults hit, in the order they first did."""
    bench(benches, 3, f"{sys.executable} {__file__} _perf {tmp}")
    binary = None
    addrs = []
    for data in sorted(pathlib.Path(tmp).glob("pf.*.data")):
        out = subprocess.run(
            ["perf", "script", "-i", str(data), "--show-mmap-events", "-F", "comm,ip,addr"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        base = None
        for line in out.splitlines():
            if "PERF_RECORD_MMAP2" in line:
                # The first mapping of the binary, at file offset 0, is where its address 0 is.
                m = re.search(r"\[(0x[0-9a-f]+)\(0x[0-9a-f]+\) @ 0 .*\s(/\S*/runner)$", line)
                if base is None and m:
                    base, binary = int(m.group(1), 16), m.group(2)
                continue
            fields = line.split()
            if base is not None and fields:
                try:
                    addrs.append(int(fields[-1], 16) - base)
                except ValueError:
                    pass
    if binary is None:
        return []
    syms = []
    nm = subprocess.run(
        ["nm", "-n", "-S", "--defined-only", binary], capture_output=True, text=True, check=True
    ).stdout
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTwW":
            syms.append((int(f[0], 16), int(f[1], 16), f[3]))
    starts = [s[0] for s in syms]
    hit = []
    for addr in addrs:
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < syms[i][0] + syms[i][1]:
            hit.append(syms[i][2])
    return hit


def perf_wrapper(tmp, argv):
    """BENCH_WRAP for the second pass: the runner under `perf record`, one file per run."""
    out = f"{tmp}/pf.{os.getpid()}.data"
    cmd = ["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", out, "--", *argv]
    os.execvp("perf", cmd)


def executed(files):
    """Self cost (instructions) per function of the runner binary, over all profiles."""
    cost = collections.Counter()
    cost_line = re.compile(r"^[+-]?\d")
    for path in files:
        obj = fn = None
        in_call = False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("ob="):
                    obj = line[3:].strip()
                elif line.startswith("fn="):
                    fn = line[3:].strip() if os.path.basename(obj or "") == "runner" else None
                elif line.startswith("calls="):
                    # The next cost line is the call's inclusive cost, not the caller's own.
                    in_call = True
                elif cost_line.match(line):
                    if in_call:
                        in_call = False
                    elif fn:
                        parts = line.split()
                        cost[fn] += int(parts[1]) if len(parts) > 1 else 0
    return cost


def main():
    if sys.argv[1:2] == ["_perf"]:
        # argv: _perf DIR; the bench appends the runner command (the binary path is argv[3]).
        perf_wrapper(sys.argv[2], sys.argv[3:])
    benches = sys.argv[1:] or ["session"]
    with tempfile.TemporaryDirectory() as tmp:
        cost = executed(profile(benches, tmp))
    names = [n for n, _ in sorted(cost.items(), key=lambda kv: (-kv[1], kv[0]))]
    if shutil.which("perf"):
        with tempfile.TemporaryDirectory() as tmp:
            names += faulted(benches, tmp)
    else:
        print("perf not found: the list has the callgrind pass only", file=sys.stderr)
    # Drop callgrind's "'2" recursion marks and anything that is not a plain symbol name.
    names = [n.split("'")[0] for n in names]
    seen = set()
    names = [n for n in names if n and " " not in n and not (n in seen or seen.add(n))]
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("".join(n + "\n" for n in names))
    print(f"{OUT.relative_to(ROOT)}: {len(names)} functions", file=sys.stderr)


if __name__ == "__main__":
    main()
