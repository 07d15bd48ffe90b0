#!/usr/bin/env bash
# The README's quick start on a fresh clone: its `cargo install --locked --path .` line, run as
# written plus a root to install into (a temporary directory) and `--debug` with the workspace's
# target directory, so the build the tests made is reused instead of a release build from
# scratch; then the installed binary runs an inline task with its prompt on stdin against the
# offline example's recorded conversation, and `runner exec -p -` with a piped prompt against
# the mock model server on 127.0.0.1 (the integration test that checks it, run with the
# installed binary in place of the built one). Quiet unless it fails.
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
# The same installed binary, its prompt piped to `runner exec -p -`, against the mock server.
test_name=cli_compat::the_prompt_is_read_from_stdin
if ! RUNNER_IT_BINARY="$tmp/bin/runner" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}" \
  cargo test --locked --quiet --test it "$test_name" -- --exact >"$tmp/test.log" 2>&1 ||
  ! grep -q '1 passed' "$tmp/test.log"; then
  echo "install_from_clone: the installed runner failed $test_name:" >&2
  cat "$tmp/test.log" >&2
  exit 1
fi
