#!/usr/bin/env bash
# A small MCP server on stdin/stdout (JSON-RPC, one message a line) for runner's tests: the
# failure cases a real server does not show on demand.
#
# Tools: echo {text}, env {var} (the value of a variable it got, or "(unset)"), crash (exits
# at once), add_tool (offers late_tool from then on and says so with
# notifications/tools/list_changed), late_tool.
#
# Options: --slow-start SECONDS (sleep before answering anything), --fail-start (exit 7 at
# once, after a line on stderr), --pid-file FILE (write its pid there).
set -u
slow=0
fail_start=0
pid_file=
while [ $# -gt 0 ]; do
  case "$1" in
    --slow-start) slow=$2; shift 2 ;;
    --fail-start) fail_start=1; shift ;;
    --pid-file) pid_file=$2; shift 2 ;;
    *) shift ;;
  esac
done
if [ -n "$pid_file" ]; then echo $$ >"$pid_file"; fi
if [ "$fail_start" = 1 ]; then
  echo "stub: failing at start as asked" >&2
  exit 7
fi
echo "stub: starting" >&2
sleep "$slow"
late=0

tools() {
  local obj='"inputSchema":{"type":"object","properties":{}}'
  printf '%s' '{"name":"echo","description":"Echo the text back.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}'
  printf '%s' ',{"name":"env","description":"The value of an environment variable of the server.","inputSchema":{"type":"object","properties":{"var":{"type":"string"}},"required":["var"]}}'
  printf '%s' ",{\"name\":\"crash\",\"description\":\"Exit at once.\",$obj}"
  printf '%s' ",{\"name\":\"add_tool\",\"description\":\"Offer one more tool.\",$obj}"
  if [ "$late" = 1 ]; then
    printf '%s' ",{\"name\":\"late_tool\",\"description\":\"Offered after add_tool.\",$obj}"
  fi
}

reply() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
text() { reply "$1" "{\"content\":[{\"type\":\"text\",\"text\":\"$2\"}],\"isError\":false}"; }

while IFS= read -r line; do
  [[ $line =~ \"method\":\"([^\"]+)\" ]] || continue
  method=${BASH_REMATCH[1]}
  id=
  if [[ $line =~ \"id\":([0-9]+) ]]; then id=${BASH_REMATCH[1]}; fi
  case "$method" in
    initialize)
      reply "$id" '{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"runner-test-stub","version":"1.0.0"}}' ;;
    tools/list) reply "$id" "{\"tools\":[$(tools)]}" ;;
    tools/call)
      [[ $line =~ \"params\":\{\"name\":\"([^\"]+)\" ]] || [[ $line =~ \"name\":\"([^\"]+)\" ]]
      tool=${BASH_REMATCH[1]}
      case "$tool" in
        echo)
          [[ $line =~ \"text\":\"([^\"]*)\" ]]
          text "$id" "echo: ${BASH_REMATCH[1]}" ;;
        env)
          [[ $line =~ \"var\":\"([A-Za-z_][A-Za-z_0-9]*)\" ]]
          var=${BASH_REMATCH[1]}
          if [ -n "${!var+x}" ]; then text "$id" "${!var}"; else text "$id" "(unset)"; fi ;;
        crash)
          echo "stub: crashing as asked" >&2
          exit 3 ;;
        add_tool)
          late=1
          printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
          text "$id" "added late_tool" ;;
        late_tool) text "$id" "late tool ran" ;;
        *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool %s"}}\n' "$id" "$tool" ;;
      esac ;;
    ping) reply "$id" '{}' ;;
    notifications/*) ;;
    *)
      if [ -n "$id" ]; then
        printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id"
      fi ;;
  esac
done
