#!/usr/bin/env bash
# The example commands of the README, the book's Examples page and the example specs' own
# headers, run exactly as they are written, from the root of this checkout: the default
# layout (`.runner/` inside the repository, git worktrees under it) that users get. Then what
# they leave behind is checked: each patch holds its fix, and the checkout itself is untouched.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t commands < <(grep -ohE 'cargo run -- exec [^`]*' README.md docs/src/examples.md tasks/examples/*.yaml |
  sed -e 's/[[:space:]]*$//' | sort -u)
if [ "${#commands[@]}" -lt 5 ]; then
  echo ".ci/examples.sh: found only ${#commands[@]} example commands" >&2
  exit 1
fi
# What the commands write; removed first so that nothing from an earlier run is checked.
outputs=(.runner/patches/fix-clippy.patch .runner/patches/edition-alpha.patch
  .runner/patches/edition-beta.patch junit.xml todos.json)
rm -f "${outputs[@]}"
before=$(git status --porcelain)
failed=0
log=$(mktemp)
for cmd in "${commands[@]}"; do
  if ! bash -c "$cmd" >"$log" 2>&1; then
    echo ".ci/examples.sh: \`$cmd\` failed:" >&2
    tail -n 30 "$log" >&2
    failed=1
  fi
done
rm -f "$log"

check() { # FILE TEXT: FILE exists and holds TEXT
  if ! grep -qF -- "$2" "$1" 2>/dev/null; then
    echo ".ci/examples.sh: $1 does not hold \"$2\"" >&2
    failed=1
  fi
}
check .runner/patches/fix-clippy.patch '+pub fn is_enabled(features: &[String], name: &str) -> bool {'
check .runner/patches/edition-alpha.patch '+edition = "2024"'
check .runner/patches/edition-beta.patch '+edition = "2024"'
check junit.xml '<testsuites'
check todos.json '"todos"'
rm -f junit.xml todos.json
# The examples work in worktrees: the checkout's own files are as they were.
after=$(git status --porcelain)
if [ "$before" != "$after" ]; then
  echo ".ci/examples.sh: the examples changed the checkout:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  failed=1
fi
if [ "$failed" = 0 ]; then
  echo "examples: ${#commands[@]} commands run from the repository root, their patches checked"
fi
exit "$failed"
