//! TranscriptSink output and read_transcript, on our own output and on real Claude Code files.

use std::io::Write;
use std::sync::Arc;

use runner::model::{ContentBlock, Role};
use runner::transcript::reader::parse_transcript;
use runner::transcript::{RecordBuilder, TranscriptError, TranscriptSink, read_transcript};
use serde_json::Value;

use crate::support::{counter, feed, read_json_lines};
use runner_test_support::script;

fn write_script(dir: &std::path::Path, fixed: bool) -> std::path::PathBuf {
    let path = dir.join("nested/dir/session.jsonl");
    let mut sink = TranscriptSink::create(&path, Arc::new(script::redactor())).unwrap();
    if fixed {
        sink = sink.with_builder(
            RecordBuilder::new()
                .with_clock(|| "2026-01-02T03:04:05.678Z".to_string())
                .with_uuid_source(counter("gen")),
        );
    }
    let mut events = script::events();
    let result = events.pop().unwrap();
    events.extend(script::off_chain_events());
    events.push(result);
    feed(&mut sink, &events);
    path
}

#[test]
fn records_follow_claude_code_shape_and_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), false);
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(raw.ends_with('\n'));
    assert!(
        !raw.contains(script::SECRET),
        "secret leaked into transcript"
    );
    assert!(raw.contains("[REDACTED:ANTHROPIC_API_KEY]"));
    let recs = read_json_lines(&path);
    let kinds: Vec<(&str, Option<&str>)> = recs
        .iter()
        .map(|r| (r["type"].as_str().unwrap(), r["subtype"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("system", Some("runner_init")),
            ("user", None),
            ("assistant", None),
            ("assistant", None),
            ("user", None),
            ("assistant", None),
            ("system", Some("runner_attempt_abandoned")),
            ("system", Some("runner_permission_denied")),
            ("user", None),
            ("system", Some("runner_result")),
        ]
    );
    for r in &recs {
        assert_eq!(r["sessionId"], script::SESSION);
        assert_eq!(r["isSidechain"], false);
        assert_eq!(r["userType"], "external");
        assert_eq!(r["entrypoint"], "runner");
        assert_eq!(r["cwd"], "/work/repo");
        assert_eq!(r["gitBranch"], "main");
        assert_eq!(r["version"], "0.1.0");
        let ts = r["timestamp"].as_str().unwrap();
        assert!(ts.ends_with('Z') && ts.len() == 24, "timestamp {ts}");
        chrono::DateTime::parse_from_rfc3339(ts).unwrap();
        assert!(r["uuid"].as_str().is_some_and(|u| !u.is_empty()));
    }
    // Init record: everything needed to reproduce the run.
    let init = &recs[0];
    assert_eq!(init["parentUuid"], Value::Null);
    assert_eq!(init["specDigest"], "0f".repeat(32));
    assert_eq!(
        init["systemPrompt"],
        "You are runner, an unattended coding agent."
    );
    assert_eq!(init["tools"][0]["name"], "Read");
    assert_eq!(init["gitBaseCommit"], "a".repeat(40));
    assert_eq!(init["spec"]["max_turns"], 5);
    // Prompt.
    assert_eq!(recs[1]["promptSource"], "sdk");
    assert_eq!(recs[1]["message"]["content"], "Fix the typo in README.md");
    // One assistant record per block, final usage and requestId on each.
    for (r, parent) in [(&recs[2], "u-0001"), (&recs[3], "a-0001")] {
        assert_eq!(r["parentUuid"], parent);
        assert_eq!(r["requestId"], "req_01");
        assert_eq!(r["message"]["id"], "msg_01");
        assert_eq!(r["message"]["stop_reason"], "tool_use");
        assert_eq!(r["message"]["usage"]["output_tokens"], 30);
        assert_eq!(r["message"]["content"].as_array().unwrap().len(), 1);
    }
    // Tool result.
    let tr = &recs[4];
    assert_eq!(tr["parentUuid"], "a-0002");
    assert_eq!(tr["sourceToolAssistantUUID"], "a-0002");
    assert_eq!(tr["message"]["content"][0]["type"], "tool_result");
    assert_eq!(tr["toolUseResult"]["file"]["numLines"], 1);
    // Off-chain records: no parent, a logical parent.
    for r in &recs[6..8] {
        assert_eq!(r["parentUuid"], Value::Null);
        assert_eq!(r["logicalParentUuid"], "a-0003");
    }
    assert_eq!(recs[6]["streamedUuids"][0], "a-0009");
    assert_eq!(recs[7]["toolName"], "Bash");
    // Result.
    let res = &recs[9];
    assert_eq!(res["result"]["runner_outcome"], "success");
    assert_eq!(res["result"]["num_turns"], 2);
    assert_eq!(res["uuid"], "99999999-9999-4999-8999-999999999999");
}

#[test]
fn reader_round_trips_own_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), true);
    let t = read_transcript(&path).unwrap();
    assert_eq!(t.records.len(), 10);
    assert!(t.truncated.is_none());
    let info = t.init_info().unwrap();
    let orig = script::init();
    assert_eq!(info.session_id, orig.session_id);
    assert_eq!(info.task_name, orig.task_name);
    assert_eq!(info.spec, orig.spec);
    assert_eq!(info.tools, orig.tools);
    assert_eq!(info.system_prompt, orig.system_prompt);
    assert_eq!(info.git_branch, orig.git_branch);
    assert_eq!(info.git_base_commit, orig.git_base_commit);
    assert_eq!(info.cwd, orig.cwd);
    assert_eq!(t.result().unwrap()["subtype"], "success");

    let msgs = t.messages().unwrap();
    let roles: Vec<Role> = msgs.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(msgs[1].content.len(), 2, "blocks of msg_01 merged");
    assert_eq!(msgs[1].id.as_deref(), Some("msg_01"));
    assert!(matches!(
        &msgs[2].content[0],
        ContentBlock::ToolResult { tool_use_id, content, .. }
            if tool_use_id == "toolu_01" && content.contains("[REDACTED:ANTHROPIC_API_KEY]")
    ));
    assert_eq!(msgs[3].text(), "Fixed the typo: `teh` → `the`.");
}

#[test]
fn killed_run_leaves_readable_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut sink = TranscriptSink::create(&path, Arc::new(script::redactor())).unwrap();
    feed(&mut sink, &script::events()[..5]);
    drop(sink);
    // Simulate a kill in the middle of the next record.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let partial = br#"{"parentUuid":"a-0002","isSidechain":false,"type":"us"#;
    f.write_all(partial).unwrap();
    drop(f);
    let t = read_transcript(&path).unwrap();
    assert_eq!(t.records.len(), 4);
    let trunc = t.truncated.unwrap();
    assert_eq!(trunc.line, 5);
    assert_eq!(trunc.bytes, partial.len());
    // Resuming appends to the same file after the prefix.
    let sink = TranscriptSink::create(&path, Arc::new(script::redactor()));
    assert!(sink.is_ok());
}

fn parse(bytes: &[u8]) -> Result<runner::transcript::Transcript, TranscriptError> {
    parse_transcript(std::path::Path::new("t.jsonl"), bytes)
}

#[test]
fn malformed_middle_lines_are_skipped_with_their_line() {
    let text = b"{\"type\":\"user\"}\n\n{\"type\": oops}\n[1,2]\n{\"type\":\"user\"}\n";
    let t = parse(text).unwrap();
    assert_eq!(t.records.len(), 2);
    assert_eq!(t.records[1].line, 5);
    let lines: Vec<usize> = t.skipped.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![3, 4]);
    assert!(t.truncated.is_none());
}

#[test]
fn missing_file_is_an_io_error() {
    let err = read_transcript("/nonexistent/runner/t.jsonl").unwrap_err();
    assert!(matches!(err, TranscriptError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/runner/t.jsonl"));
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/transcripts");

#[test]
fn reads_real_claude_code_transcripts() {
    // (file, records, whole session?)
    for (file, n, whole) in [
        (
            "claude-code-viewer_session_1af7fc5e_v1.0.98_full.jsonl",
            29,
            true,
        ),
        (
            "claude-code-viewer_session_5c0375b4_v1.0.108_full.jsonl",
            53,
            true,
        ),
        (
            "claude-code-viewer_session_fe5e1c67_v1.0.98_first40lines.jsonl",
            40,
            false,
        ),
    ] {
        let t = read_transcript(format!("{FIXTURES}/{file}")).unwrap();
        assert_eq!(t.records.len(), n, "{file}");
        assert!(t.truncated.is_none(), "{file}");
        assert!(t.init_info().is_none(), "not a runner transcript");
        let msgs = t.messages().unwrap();
        assert!(!msgs.is_empty(), "{file}");
        // Roles alternate after merging (consecutive user records merge; assistant records
        // merge by message id).
        for pair in msgs.windows(2) {
            if pair[0].role == Role::User {
                assert_eq!(pair[1].role, Role::Assistant, "{file}");
            }
        }
        if !whole {
            // Cut after 40 lines: two of three parallel Task calls are still unanswered.
            continue;
        }
        // Every tool_use in the main chain is answered by a tool_result.
        let uses: Vec<&str> = msgs
            .iter()
            .flat_map(|m| m.tool_uses().map(|(id, _, _)| id))
            .collect();
        for id in uses {
            assert!(
                msgs.iter().flat_map(|m| &m.content).any(|b| matches!(
                    b, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id
                )),
                "{file}: {id} unanswered"
            );
        }
    }
}

#[test]
fn sidechain_records_are_left_out_of_messages() {
    let t = read_transcript(format!(
        "{FIXTURES}/claude-code-viewer_session_5c0375b4_v1.0.108_full.jsonl"
    ))
    .unwrap();
    let side = t.records.iter().filter(|r| r.is_sidechain()).count();
    assert_eq!(side, 22);
    let main_chain_blocks: usize = t
        .records
        .iter()
        .filter(|r| !r.is_sidechain() && matches!(r.kind(), Some("user" | "assistant")))
        .map(|r| match r.message().and_then(|m| m.get("content")) {
            Some(Value::Array(a)) => a.len(),
            Some(Value::String(_)) => 1,
            _ => 0,
        })
        .sum();
    let msgs = t.messages().unwrap();
    let blocks: usize = msgs.iter().map(|m| m.content.len()).sum();
    assert_eq!(blocks, main_chain_blocks);
}
