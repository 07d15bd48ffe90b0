//! Produces the artifacts `.ci/run` feeds to Claude Code's own tools: a runner transcript
//! (read by `claude-code-log` and `ccusage`), runner's stream-json frames (parsed by the Python
//! `claude-agent-sdk` message parser) and `expected.json` with the totals those tools must
//! report. They land in `$RUNNER_COMPAT_DIR` (set by `.ci/run`), else in
//! `$CARGO_TARGET_TMPDIR/compat`. The test itself checks the figures it writes, so the
//! external checks compare against numbers the binary really produced.

use std::path::PathBuf;

use crate::support::*;
use serde_json::json;

fn compat_dir() -> PathBuf {
    let dir = std::env::var_os("RUNNER_COMPAT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compat"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn writes_artifacts_for_the_claude_code_tool_checks() {
    let repo = TestRepo::new();
    let file = std::fs::canonicalize(repo.write("notes.txt", "hello\n")).unwrap();
    // A session with every frame kind runner emits in a plain run: init, assistant text and
    // tool_use, tool results, a denied call, an API retry, a reminder user message, the result.
    let mock = MockAnthropic::start(vec![
        http_error(529),
        Resp::new()
            .id("msg_c1")
            .text("Reading the notes.")
            .tool_use("toolu_c1", "Read", json!({"file_path": file}))
            .usage(120, 30)
            .cache(400, 0)
            .turn(),
        Resp::new()
            .id("msg_c2")
            .tool_use("toolu_c2", "Bash", json!({"command": "rm -rf /tmp/x"}))
            .usage(60, 15)
            .cache(0, 400)
            .turn(),
        Resp::new()
            .id("msg_c3")
            .text("The notes say hello.")
            .tool_use(
                "toolu_c3",
                "StructuredOutput",
                json!({"summary": "hello", "files": 1}),
            )
            .usage(80, 25)
            .cache(10, 400)
            .turn(),
    ]);
    let spec = write_spec(
        repo.path(),
        "name: compat\nprompt: summarize notes.txt\nmodel: claude-sonnet-4-5\n\
         retry: {base_delay: 1ms}\n\
         output:\n  schema:\n    type: object\n    properties:\n      summary: {type: string}\n      files: {type: integer}\n    required: [summary, files]\n",
    );
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(0);
    let frames = run.json();
    let result = frames.last().unwrap().clone();
    assert_eq!(result["type"], "result");
    assert_eq!(
        result["structured_output"],
        json!({"summary": "hello", "files": 1})
    );
    // Sums over the three successful responses (the 529 had no usage).
    let expected_usage = json!({
        "input_tokens": 260,
        "output_tokens": 70,
        "cache_creation_input_tokens": 410,
        "cache_read_input_tokens": 800,
    });
    assert_eq!(result["usage"], expected_usage);
    for (kind, sub) in [
        ("system", Some("init")),
        ("system", Some("api_retry")),
        ("system", Some("permission_denied")),
        ("assistant", None),
        ("user", None),
    ] {
        assert!(
            !events_of(&frames, kind, sub).is_empty(),
            "no {kind}/{sub:?} frame"
        );
    }
    let transcript = result["runner_transcript_path"].as_str().unwrap();
    let records = read_json_lines(std::path::Path::new(transcript));
    assert_chain(&records);

    let dir = compat_dir();
    std::fs::copy(transcript, dir.join("transcript.jsonl")).unwrap();
    std::fs::write(dir.join("stream.jsonl"), &run.stdout).unwrap();
    let expected = json!({
        "session_id": result["session_id"],
        "usage": expected_usage,
        "total_tokens": 260 + 70 + 410 + 800,
        "structured_output": result["structured_output"],
        "frames": frames.len(),
    });
    std::fs::write(
        dir.join("expected.json"),
        serde_json::to_string_pretty(&expected).unwrap(),
    )
    .unwrap();
    eprintln!("compat artifacts in {}", dir.display());
    mock.assert_clean();
}
