"""Check runner's outputs with Claude Code's own tools (run by .ci/run).

Inputs, all produced from one real run of the binary by tests/it/compat_artifacts.rs:
  COMPAT/stream.jsonl   runner's stream-json frames
  COMPAT/expected.json  the token totals, session id and structured output of that run
and the exports of two tools that read the run's transcript:
  CCL_JSON              `claude-code-log TRANSCRIPT -o out.json`
  CCUSAGE_JSON          `ccusage session --json --offline` over a Claude config dir holding it

Every stream-json frame must parse with the Python claude-agent-sdk's own message parser
(claude_agent_sdk._internal.message_parser.parse_message) into the SDK type for its `type`,
and both tools must report the run's exact token totals.

usage: python compat.py COMPAT_DIR CCL_JSON CCUSAGE_JSON
"""

import json
import re
import sys

from claude_agent_sdk import AssistantMessage, ResultMessage, SystemMessage, UserMessage
from claude_agent_sdk._internal.message_parser import parse_message

SDK_TYPES = {
    "system": SystemMessage,
    "assistant": AssistantMessage,
    "user": UserMessage,
    "result": ResultMessage,
}


def fail(msg):
    print(f"compat: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check_stream(path, expected):
    frames = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    if len(frames) != expected["frames"]:
        fail(f"{path}: {len(frames)} frames, expected {expected['frames']}")
    result = None
    for i, frame in enumerate(frames, 1):
        want = SDK_TYPES.get(frame.get("type"))
        if want is None:
            fail(f"frame {i}: type {frame.get('type')!r} is not an SDK message type")
        try:
            msg = parse_message(frame)
        except Exception as e:  # MessageParseError and anything the parser trips on
            fail(f"frame {i} ({frame.get('type')}/{frame.get('subtype')}): {e}")
        if not isinstance(msg, want):
            fail(f"frame {i}: parsed as {type(msg).__name__}, expected {want.__name__}")
        result = msg if isinstance(msg, ResultMessage) else result
    if result is None or not isinstance(msg, ResultMessage):
        fail("the last frame is not a result")
    if result.session_id != expected["session_id"] or result.is_error:
        fail(f"result: session {result.session_id}, is_error {result.is_error}")
    if result.usage != expected["usage"]:
        fail(f"result usage {result.usage} != {expected['usage']}")
    if result.structured_output != expected["structured_output"]:
        fail(f"structured_output {result.structured_output!r} != {expected['structured_output']!r}")
    print(f"compat: claude-agent-sdk parsed all {len(frames)} stream-json frames")


def check_claude_code_log(path, expected):
    export = json.load(open(path, encoding="utf-8"))
    sessions = [s for s in export["sessions"] if s["id"] == expected["session_id"]]
    if len(sessions) != 1:
        fail(f"claude-code-log: session {expected['session_id']} not in {path}")
    summary = sessions[0]["token_summary"] or ""
    got = {k: int(v) for k, v in re.findall(r"(Input|Output|Cache Creation|Cache Read): (\d+)", summary)}
    u = expected["usage"]
    want = {
        "Input": u["input_tokens"],
        "Output": u["output_tokens"],
        "Cache Creation": u["cache_creation_input_tokens"],
        "Cache Read": u["cache_read_input_tokens"],
    }
    if got != want:
        fail(f"claude-code-log token summary {summary!r}, expected {want}")
    print(f"compat: claude-code-log: {summary}")


def check_ccusage(path, expected):
    totals = json.load(open(path, encoding="utf-8"))["totals"]
    u = expected["usage"]
    want = {
        "inputTokens": u["input_tokens"],
        "outputTokens": u["output_tokens"],
        "cacheCreationTokens": u["cache_creation_input_tokens"],
        "cacheReadTokens": u["cache_read_input_tokens"],
        "totalTokens": expected["total_tokens"],
    }
    got = {k: totals.get(k) for k in want}
    if got != want:
        fail(f"ccusage totals {got}, expected {want}")
    print(f"compat: ccusage: {got}")


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    compat, ccl, ccusage = sys.argv[1:]
    expected = json.load(open(f"{compat}/expected.json", encoding="utf-8"))
    check_stream(f"{compat}/stream.jsonl", expected)
    check_claude_code_log(ccl, expected)
    check_ccusage(ccusage, expected)


if __name__ == "__main__":
    main()
