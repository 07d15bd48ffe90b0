#!/usr/bin/env bash
# Last step of the composite action (action.yml): run `runner exec` with the action's inputs.
# Inputs arrive through the environment, never pasted into a script with ${{ }}:
#
#   RUNNER_BIN        the runner binary
#   RUNNER_TASKS      spec files or directories, separated by spaces or newlines
#   RUNNER_ARGS       extra arguments, one argument per line (blank lines skipped, surrounding
#                     whitespace removed), so `--allowed-tools=Bash(git diff *)` stays whole
#   RUNNER_JOBS, RUNNER_JUNIT, RUNNER_MODEL, RUNNER_MAX_COST, RUNNER_MODE   the other inputs
#   RUNNER_API_KEY    the anthropic-api-key input; exported as ANTHROPIC_API_KEY when set
#
# `exec` hands the step's signals (SIGINT, then SIGTERM on cancel) straight to runner, which
# writes its reports before it exits. Bash 3.2 (macOS) compatible.
set -euo pipefail

: "${RUNNER_BIN:?the runner binary}"

tasks=()
read -r -d '' -a tasks <<<"${RUNNER_TASKS:-}" || true
if [ ${#tasks[@]} -eq 0 ]; then
  echo "::error title=runner action::the tasks input is empty: name task spec files or directories"
  exit 2
fi

args=(exec --jobs "${RUNNER_JOBS:-1}" --junit "${RUNNER_JUNIT:-runner-junit.xml}")
if [ -n "${RUNNER_MODEL:-}" ]; then args+=(--model "$RUNNER_MODEL"); fi
if [ -n "${RUNNER_MAX_COST:-}" ]; then args+=(--max-cost-usd "$RUNNER_MAX_COST"); fi
if [ -n "${RUNNER_MODE:-}" ]; then args+=(--permission-mode "$RUNNER_MODE"); fi

while IFS= read -r line || [ -n "$line" ]; do
  line=${line%$'\r'}
  line=${line#"${line%%[![:space:]]*}"}
  line=${line%"${line##*[![:space:]]}"}
  [ -n "$line" ] || continue
  # `--flag value` on one line reaches runner as one argument, which it rejects; say why.
  first=${line%%[[:space:]]*}
  if [ "$first" != "$line" ] && [ "${first#-}" != "$first" ] && [ "${first#*=}" = "$first" ]; then
    shown=${line//%/%25}
    echo "::warning title=runner action::args: '$shown' is one argument; write one argument per line ('$first' and its value on separate lines, or $first=VALUE)"
  fi
  args+=("$line")
done <<<"${RUNNER_ARGS:-}"

if [ -n "${RUNNER_API_KEY:-}" ]; then
  echo "::add-mask::$RUNNER_API_KEY"
  export ANTHROPIC_API_KEY="$RUNNER_API_KEY"
fi
unset RUNNER_API_KEY

exec "$RUNNER_BIN" "${args[@]}" "${tasks[@]}"
