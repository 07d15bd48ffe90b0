#!/usr/bin/env bash
# Last step of the composite action (action.yml): run `runner exec` with the action's inputs.
# Inputs arrive through the environment, never pasted into a script with ${{ }}:
#
#   RUNNER_BIN        the runner binary
#   RUNNER_TASKS      spec files or directories, separated by spaces or newlines
#   RUNNER_ARGS       extra arguments, split like a shell (quotes honoured, nothing expanded;
#                     parentheses keep `--allowed-tools=Bash(git diff *)` whole), over any
#                     number of lines
#   RUNNER_PROMPT     a one-line task (`runner exec -p PROMPT`) instead of RUNNER_TASKS
#   RUNNER_JOBS, RUNNER_JUNIT, RUNNER_MODEL, RUNNER_MAX_COST, RUNNER_MODE, RUNNER_PROVIDER
#                     the other inputs
#   RUNNER_API_KEY    the anthropic-api-key input; exported as ANTHROPIC_API_KEY when set
#
# `exec` hands the step's signals (SIGINT, then SIGTERM on cancel) straight to runner, which
# writes its reports before it exits. Bash 3.2 (macOS) compatible.
set -euo pipefail

: "${RUNNER_BIN:?the runner binary}"

tasks=()
read -r -d '' -a tasks <<<"${RUNNER_TASKS:-}" || true
if [ ${#tasks[@]} -eq 0 ] && [ -z "${RUNNER_PROMPT:-}" ]; then
  echo "::error title=runner action::the tasks input is empty: name task spec files or directories (or give a prompt)"
  exit 2
fi

args=(exec --jobs "${RUNNER_JOBS:-1}" --junit "${RUNNER_JUNIT:-runner-junit.xml}")
if [ -n "${RUNNER_MODEL:-}" ]; then args+=(--model "$RUNNER_MODEL"); fi
if [ -n "${RUNNER_MAX_COST:-}" ]; then args+=(--max-cost-usd "$RUNNER_MAX_COST"); fi
if [ -n "${RUNNER_MODE:-}" ]; then args+=(--permission-mode "$RUNNER_MODE"); fi
if [ -n "${RUNNER_PROVIDER:-}" ]; then args+=(--provider "$RUNNER_PROVIDER"); fi

# Split one line of the args input into words as a shell would, without expanding anything:
# spaces separate words, '...' and "..." quote (a backslash escapes the next character outside
# single quotes), and parentheses keep a permission rule's words together
# (`--allowed-tools=Bash(git diff *)` is one word). Appends to `args`; fails on an open quote.
split_line() {
  local line=$1 word="" have=0 quote="" depth=0 c i
  for ((i = 0; i < ${#line}; i++)); do
    c=${line:i:1}
    if [ -n "$quote" ]; then
      if [ "$c" = "$quote" ]; then
        quote=""
      elif [ "$quote" = '"' ] && [ "$c" = "\\" ] && [ $((i + 1)) -lt ${#line} ]; then
        i=$((i + 1))
        word+=${line:i:1}
      else
        word+=$c
      fi
      continue
    fi
    case $c in
      "'" | '"') quote=$c; have=1 ;;
      \\)
        if [ $((i + 1)) -lt ${#line} ]; then
          i=$((i + 1))
          word+=${line:i:1}
          have=1
        fi
        ;;
      ' ' | $'\t')
        if [ "$depth" -gt 0 ]; then
          word+=$c
        elif [ "$have" = 1 ]; then
          args+=("$word")
          word=""
          have=0
        fi
        ;;
      '(') depth=$((depth + 1)); word+=$c; have=1 ;;
      ')') [ "$depth" -gt 0 ] && depth=$((depth - 1)); word+=$c; have=1 ;;
      *) word+=$c; have=1 ;;
    esac
  done
  if [ -n "$quote" ]; then
    return 1
  fi
  if [ "$have" = 1 ]; then args+=("$word"); fi
}

while IFS= read -r line || [ -n "$line" ]; do
  line=${line%$'\r'}
  if ! split_line "$line"; then
    shown=${line//%/%25}
    echo "::error title=runner action::args: a quote in '$shown' is never closed"
    exit 2
  fi
done <<<"${RUNNER_ARGS:-}"

# The prompt input: one inline task (`runner exec -p PROMPT`) instead of spec files.
if [ -n "${RUNNER_PROMPT:-}" ]; then
  if [ ${#tasks[@]} -gt 0 ]; then
    echo "::error title=runner action::give either the prompt input or the tasks input, not both"
    exit 2
  fi
  args+=(-p "$RUNNER_PROMPT")
fi

if [ -n "${RUNNER_API_KEY:-}" ]; then
  echo "::add-mask::$RUNNER_API_KEY"
  export ANTHROPIC_API_KEY="$RUNNER_API_KEY"
fi
unset RUNNER_API_KEY

exec "$RUNNER_BIN" "${args[@]}" ${tasks[@]+"${tasks[@]}"}
