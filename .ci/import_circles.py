#!/usr/bin/env python3
"""No import circle between files or modules, anywhere in the workspace's crates.

For each crate (`src/` and `crates/*/src/`) this reads every `use` tree and every
`crate::`/`super::`/`self::` path in the code (comments and `#[cfg(test)]` modules left out),
resolves each to the file of the module that defines the name (following `pub use`
re-exports), and checks two things:

- the graph between files has no circle;
- at every level of the module tree, the graph between sibling modules (each a file or a
  folder, with everything below it) has no circle. A module's own file (`mod.rs`, `lib.rs`) is
  its parent's business: a child naming its parent is not an edge between siblings.

Between crates, it reads each `Cargo.toml` and checks that every workspace crate depends only
on the crates below it in `CRATES` (normal and dev-dependencies: a dev-dependency that reached
up would be a circle too), that every crate under `crates/` has its place there, and that the
crates kept free of an async runtime, an HTTP client or a git library (`FREE_OF`) do not reach
one through any workspace crate they depend on.

Exits 1 naming each circle and the paths that tie it; prints one summary line otherwise.
"""

import os
import re
import sys
import tomllib
from collections import defaultdict

# The workspace's crates, each with the crates it may depend on: the direction of
# docs/src/architecture.md, "Crates". A new crate gets its line here.
CRATES = {
    "runner-protocol": set(),
    "runner-policy": {"runner-protocol"},
    "runner-exec": {"runner-protocol"},
    "runner-model": {"runner-protocol"},
    "runner-telemetry": {"runner-protocol"},
    "runner-spec": {"runner-protocol", "runner-policy", "runner-exec", "runner-model"},
    "runner-report": {"runner-protocol", "runner-exec", "runner-model", "runner-spec", "runner-telemetry"},
    "runner-git": {"runner-protocol", "runner-policy", "runner-exec", "runner-model", "runner-spec", "runner-report", "runner-telemetry"},
    "runner-core": {"runner-protocol", "runner-policy", "runner-exec", "runner-model", "runner-spec", "runner-report", "runner-telemetry", "runner-git"},
    "runner": {"runner-core", "runner-git", "runner-report", "runner-spec", "runner-protocol", "runner-policy", "runner-exec", "runner-model", "runner-telemetry"},
}

# External crates a workspace crate must not depend on, directly or through another
# workspace crate.
FREE_OF = {
    "runner-protocol": {"tokio", "reqwest", "git2"},
    "runner-policy": {"tokio", "reqwest", "git2"},
    "runner-exec": {"tokio", "tokio-util", "reqwest", "git2"},
    "runner-model": {"git2"},
    "runner-telemetry": {"git2"},
}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif text.startswith("r#\"", i) or text.startswith('r"', i):
            hashes = 1 if text[i + 1] == "#" else 0
            end = '"' + "#" * hashes
            j = text.find(end, i + 2 + hashes)
            out.append('""')
            i = n if j < 0 else j + len(end)
        elif text[i] == "'" and i + 2 < n and (text[i + 2] == "'" or text[i + 1] == "\\"):
            j = text.find("'", i + 2)
            out.append("' '")
            i = n if j < 0 else j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def strip_test_modules(text):
    """Remove `#[cfg(test)] mod x { ... }` blocks; return (text, names of `#[cfg(test)] mod x;`)."""
    out, i = [], 0
    pattern = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s*)?mod\s+(" + IDENT + r")\s*([;{])")
    tests = set()
    while True:
        m = pattern.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i : m.start()])
        if m.group(2) == ";":
            tests.add(m.group(1))
            i = m.end()
            continue
        j, depth = m.end(), 1
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    return "".join(out), tests


def expand_use(tree):
    """`a::{b, c::{d, e as f}, self}` -> [[a,b], [a,c,d], [a,c,e], [a]] (aliases dropped)."""
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)
    tree = re.sub(r"\s+", "", tree)

    def split_top(s):
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += {"{": 1, "}": -1}.get(ch, 0)
            cur += ch
        if cur:
            parts.append(cur)
        return parts

    def go(prefix, s):
        if "{" in s:
            head, inner = s.split("{", 1)
            inner = inner[: inner.rfind("}")]
            head_parts = [p for p in head.split("::") if p]
            res = []
            for part in split_top(inner):
                res += go(prefix + head_parts, part)
            return res
        segs = [p for p in s.split("::") if p]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        if segs and segs[-1] == "*":
            segs = segs[:-1]
        return [prefix + segs]

    return go([], tree)


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path tuple -> file
        self.test_files = set()
        self.text = {}
        self.reexports = defaultdict(dict)  # module -> name -> absolute path list
        self.extern_reexports = defaultdict(set)
        self.discover()

    def discover(self):
        for dirpath, _, names in os.walk(self.src):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, self.src).split(os.sep)
                if rel == ["lib.rs"] or rel == ["main.rs"]:
                    mod = ()
                elif rel[-1] == "mod.rs":
                    mod = tuple(rel[:-1])
                else:
                    mod = tuple(rel[:-1]) + (rel[-1][:-3],)
                if rel == ["main.rs"] and os.path.exists(os.path.join(self.src, "lib.rs")):
                    continue  # the binary's root: a crate of its own that uses the library
                self.files[mod] = path
        tests = set()
        for mod, path in self.files.items():
            text, test_mods = strip_test_modules(strip_comments(open(path, encoding="utf-8").read()))
            self.text[mod] = text
            for t in test_mods:
                tests.add(mod + (t,))
        for mod in list(self.files):
            if any(mod[: len(t)] == t for t in tests):
                self.test_files.add(mod)
        for mod in self.test_files:
            del self.files[mod]
            del self.text[mod]
        for mod, text in self.text.items():
            for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
                alias = re.search(r"\s+as\s+(" + IDENT + r")\s*$", m.group(1))
                paths = expand_use(m.group(1))
                for path in paths:
                    if not path:
                        continue
                    absolute = self.absolute(mod, path)
                    name = path[-1]
                    if alias and len(paths) == 1:
                        name = alias.group(1)
                    if absolute is None:
                        self.extern_reexports[mod].add(name)
                    else:
                        self.reexports[mod][name] = absolute

    def absolute(self, mod, path):
        """`path` as written in module `mod`, made absolute (None: another crate or std)."""
        if not path:
            return None
        head = path[0]
        if head == "crate":
            return list(path[1:])
        if head == "self":
            return list(mod) + list(path[1:])
        if head == "super":
            base = list(mod)
            rest = list(path)
            while rest and rest[0] == "super":
                base = base[:-1]
                rest = rest[1:]
            return base + rest
        # A path relative to the module: a child module or a name in scope.
        if tuple(mod) + (head,) in self.files:
            return list(mod) + list(path)
        return None

    def target(self, absolute, hops=0):
        """The file (module) that defines what `absolute` names."""
        best = ()
        for i in range(len(absolute), -1, -1):
            if tuple(absolute[:i]) in self.files:
                best = tuple(absolute[:i])
                break
        rest = absolute[len(best) :]
        if rest and hops < 8:
            if rest[0] in self.reexports.get(best, {}):
                return self.target(self.reexports[best][rest[0]] + rest[1:], hops + 1)
            if rest[0] in self.extern_reexports.get(best, set()):
                return None
        return best

    def edges(self):
        edges = defaultdict(lambda: defaultdict(set))
        for mod, text in self.text.items():
            paths = []
            for m in re.finditer(r"\buse\s+([^;]+);", text):
                # `pub use` lines are re-exports: resolved through, not edges of their own,
                # except that the module does depend on what it re-exports.
                paths += expand_use(m.group(1))
            for m in re.finditer(r"\b((?:crate|super|self)(?:::" + IDENT + r")+)", text):
                paths.append(m.group(1).split("::"))
            for path in paths:
                absolute = self.absolute(mod, path)
                if absolute is None:
                    continue
                tgt = self.target(absolute)
                if tgt is None or tgt == mod:
                    continue
                edges[mod][tgt].add("::".join(path))
        return edges


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def name(crate, mod):
    return os.path.relpath(crate.files.get(mod, crate.src + "/" + "/".join(mod)))


def manifest_deps(path):
    """A Cargo.toml's package name and the names of its dependencies (normal, dev, target)."""
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    tables = [doc.get("dependencies", {}), doc.get("dev-dependencies", {})]
    for target in doc.get("target", {}).values():
        tables += [target.get("dependencies", {}), target.get("dev-dependencies", {})]
    deps = set()
    for table in tables:
        for key, spec in table.items():
            deps.add(spec.get("package", key) if isinstance(spec, dict) else key)
    return doc.get("package", {}).get("name"), deps


def crate_problems(root):
    """Workspace crates that depend upwards, have no place in CRATES or reach a FREE_OF crate."""
    manifests = [os.path.join(root, "Cargo.toml")]
    crates_dir = os.path.join(root, "crates")
    if os.path.isdir(crates_dir):
        manifests += sorted(
            os.path.join(crates_dir, c, "Cargo.toml")
            for c in os.listdir(crates_dir)
            if os.path.isfile(os.path.join(crates_dir, c, "Cargo.toml"))
        )
    deps = dict(manifest_deps(m) for m in manifests)
    problems = []
    for crate, uses in sorted(deps.items()):
        if crate not in CRATES:
            problems.append(f"crate {crate} has no place in CRATES (.ci/import_circles.py)")
            continue
        for up in sorted((uses & set(deps)) - CRATES[crate]):
            problems.append(f"crate {crate} depends on {up}, which is not below it")
    for crate, banned in sorted(FREE_OF.items()):
        seen, todo = set(), [crate]
        while todo:
            c = todo.pop()
            if c in seen or c not in deps:
                continue
            seen.add(c)
            for bad in sorted(deps[c] & banned):
                via = "" if c == crate else f" through {c}"
                problems.append(f"crate {crate} reaches {bad}{via}")
            todo += sorted(deps[c] & set(deps))
    return problems, len(deps)


def main(root):
    crates = [os.path.join(root, "src")]
    crates_dir = os.path.join(root, "crates")
    if os.path.isdir(crates_dir):
        crates += sorted(
            os.path.join(crates_dir, c, "src")
            for c in os.listdir(crates_dir)
            if os.path.isdir(os.path.join(crates_dir, c, "src"))
        )
    problems, files, modules = [], 0, 0
    for src in crates:
        crate = Crate(src)
        edges = crate.edges()
        files += len(crate.files)
        # Files.
        for comp in sccs(crate.files.keys(), edges):
            ties = [
                f"    {name(crate, a)} -> {name(crate, b)}: {', '.join(sorted(edges[a][b])[:3])}"
                for a in comp
                for b in comp
                if b in edges.get(a, {})
            ]
            problems.append(f"circle between files: {', '.join(name(crate, m) for m in comp)}\n" + "\n".join(ties))
        # Sibling modules at every level.
        parents = {m[:-1] for m in crate.files if m} | {()}
        for parent in sorted(parents):
            depth = len(parent)
            children = {m[depth] for m in crate.files if len(m) > depth and m[:depth] == parent}
            if len(children) < 2:
                continue
            modules += 1
            sib = defaultdict(lambda: defaultdict(set))
            for a, targets in edges.items():
                if len(a) <= depth or a[:depth] != parent:
                    continue
                for b, via in targets.items():
                    if len(b) <= depth or b[:depth] != parent or a[depth] == b[depth]:
                        continue
                    sib[a[depth]][b[depth]] |= {f"{name(crate, a)}: {v}" for v in via}
            for comp in sccs(children, sib):
                where = "/".join(parent) or "(crate root)"
                ties = [
                    f"    {a} -> {b}: {'; '.join(sorted(sib[a][b])[:2])}"
                    for a in comp
                    for b in comp
                    if b in sib.get(a, {})
                ]
                problems.append(
                    f"circle between modules of {os.path.relpath(src)}/{where if parent else ''}: {', '.join(comp)}\n"
                    + "\n".join(ties)
                )
    crate_issues, crate_count = crate_problems(root)
    problems += crate_issues
    if problems:
        print(f"import circles: {len(problems)} found", file=sys.stderr)
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    print(
        f"import circles: none among {files} files and {modules} module levels of {len(crates)} crates;"
        f" {crate_count} crates depend one way"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
