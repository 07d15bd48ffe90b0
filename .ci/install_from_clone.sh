#!/usr/bin/env bash
# The README's quick start on a fresh clone: its `cargo install --locked --path .` line, run as
# written plus a root to install into (a temporary directory) and `--debug` with the workspace's
# target directory, so the build the tests made is reused instead of a release build from
# scratch; then the installed binary runs an inline task with its prompt on stdin against the
# offline example's recorded conversation. Quiet unless it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line=$(grep -m1 -x 'cargo install --locked --path \.' README.md) || {
  echo "install_from_clone: the README's quick start has no \`cargo install --locked --path .\` line" >&2
  exit 1
}
read -r -a install <<<"$line"
if ! CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}" "${install[@]}" --root "$tmp" --debug \
  --quiet >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  exit 1
fi
ex=tasks/examples
if ! out=$("$tmp/bin/runner" exec -p - --replay "$ex/hello-replay.cassette.jsonl" \
  --cd "$ex/sample" --tools Read,Glob,Grep,Bash --transcript-dir "$tmp/out" 2>"$tmp/err" \
  <<<"Survey this project: list its files, read the source, find any TODO comments."); then
  echo "install_from_clone: the installed runner failed:" >&2
  cat "$tmp/err" >&2
  exit 1
fi
if ! grep -q TODO <<<"$out"; then
  echo "install_from_clone: unexpected answer from the installed runner: $out" >&2
  exit 1
fi
