//! Context management through the real binary against the mock Anthropic server:
//! `prompt is too long` → compaction → success, autocompact on a small configured window,
//! three failed compactions → `context_exhausted`, and microcompact clearing old tool results
//! from requests while the transcript keeps them.

use crate::support::*;
use serde_json::{Value, json};

const FAST_RETRY: &str = "retry:\n  base_delay: 1ms\n  max_delay: 5ms\n";

/// `runner exec SPEC --output-format stream-json` in `repo` (the transcript stays in the
/// repository's `.runner/`).
fn run_in(mock: &MockAnthropic, repo: &TestRepo, yaml: &str) -> Run {
    let spec = write_spec(repo.path(), yaml);
    exec_in(mock, repo).arg(&spec).stream_json().run()
}

fn prompt_too_long() -> MockTurn {
    prompt_too_long_at(210_000)
}

/// `prompt is too long` for a request the server counts at `tokens`.
fn prompt_too_long_at(tokens: u64) -> MockTurn {
    MockTurn::Http {
        status: 400,
        body: json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": format!("prompt is too long: {tokens} tokens > 200000 maximum")},
            "request_id": "req_ptl"
        })
        .to_string(),
        headers: vec![],
    }
}

fn is_compaction_request(r: &CapturedRequest) -> bool {
    r.system_text()
        .contains("You summarize the work of a coding agent")
}

/// The boundary record and the summary record right after it, in Claude Code's shape.
fn assert_compact_records(transcript: &[Value], summary: &str) {
    let boundaries = events_of(transcript, "system", Some("compact_boundary"));
    assert_eq!(boundaries.len(), 1, "{transcript:#?}");
    let b = boundaries[0];
    assert_eq!(b["compactMetadata"]["trigger"], "auto");
    assert!(b["compactMetadata"]["preTokens"].as_u64().unwrap() > 0);
    assert!(b["parentUuid"].is_null());
    assert!(b["logicalParentUuid"].is_string());
    let pos = transcript
        .iter()
        .position(|r| r["uuid"] == b["uuid"])
        .unwrap();
    let s = &transcript[pos + 1];
    assert_eq!(s["type"], "user");
    assert_eq!(s["isCompactSummary"], true);
    assert_eq!(s["parentUuid"], b["uuid"]);
    let text = s["message"]["content"].as_str().unwrap();
    assert!(text.contains(summary), "{text}");
    assert!(text.contains("<task>\ndo it\n</task>"), "{text}");
}

#[test]
fn prompt_too_long_compacts_and_retries_to_success() {
    let mock = MockAnthropic::start(vec![
        prompt_too_long(),
        Resp::new()
            .text("Nothing done yet; next: do it.")
            .usage(300, 40)
            .turn(),
        Resp::new().text("Done.").usage(100, 7).turn(),
    ]);
    let repo = TestRepo::new();
    let r = run_in(
        &mock,
        &repo,
        &format!("name: t1\nprompt: \"do it\"\n{FAST_RETRY}"),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(!is_compaction_request(&reqs[0]));
    // The summarizing call: its own system prompt, no tools, the conversation as text.
    assert!(is_compaction_request(&reqs[1]));
    assert!(reqs[1].tool_names().is_empty());
    assert!(reqs[1].message_text(0).contains("[user]\ndo it"));
    // The retry starts from the summary plus the task prompt.
    assert!(!is_compaction_request(&reqs[2]));
    assert_eq!(reqs[2].messages().len(), 1);
    let text = reqs[2].message_text(0);
    assert!(text.contains("Nothing done yet; next: do it."), "{text}");
    assert!(text.contains("<task>\ndo it\n</task>"), "{text}");

    let boundary = r.system("compact_boundary");
    assert_eq!(boundary.len(), 1);
    assert_eq!(boundary[0]["compact_metadata"]["trigger"], "auto");
    assert!(boundary[0]["compact_metadata"]["pre_tokens"].is_u64());
    // The summary is not shown as an assistant message.
    assert!(
        !r.json()
            .iter()
            .any(|f| f["type"] == "assistant" && f.to_string().contains("Nothing done yet"))
    );
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "success");
    assert_eq!(res["num_turns"], 1, "the compaction call is not a turn");
    // The compaction call counts toward usage (and so toward budgets).
    assert_eq!(res["usage"]["input_tokens"], 400);
    assert_eq!(res["usage"]["output_tokens"], 47);
    assert_compact_records(
        &repo.transcript().unwrap(),
        "Nothing done yet; next: do it.",
    );
    mock.assert_clean();
}

/// A response that stops with `model_context_window_exceeded` is compacted and the loop goes on
/// from the summary, instead of ending the task.
#[test]
fn a_full_context_window_stop_compacts_and_continues() {
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .text("Reading everything first")
            .stop("model_context_window_exceeded")
            .usage(500, 20)
            .turn(),
        Resp::new()
            .text("Started reading; next: finish.")
            .usage(300, 40)
            .turn(),
        Resp::new().text("Done.").usage(100, 7).turn(),
    ]);
    let repo = TestRepo::new();
    let r = run_in(
        &mock,
        &repo,
        &format!("name: t1\nprompt: \"do it\"\n{FAST_RETRY}"),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(is_compaction_request(&reqs[1]));
    assert!(reqs[1].message_text(0).contains("Reading everything first"));
    let text = reqs[2].message_text(0);
    assert!(text.contains("Started reading; next: finish."), "{text}");
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "success");
    assert_compact_records(
        &repo.transcript().unwrap(),
        "Started reading; next: finish.",
    );
    mock.assert_clean();
}

#[test]
fn autocompact_runs_when_the_configured_window_fills() {
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Glob", json!({"pattern": "*.txt"}))
            .usage(900, 20)
            .turn(),
        Resp::new()
            .text("Listed the files; next: finish.")
            .usage(500, 30)
            .turn(),
        Resp::new().text("Done.").usage(200, 5).turn(),
    ]);
    let repo = TestRepo::new();
    repo.write("a.txt", "hello\n");
    let yaml = format!(
        "name: t1\nprompt: \"do it\"\nmodels:\n  claude-sonnet-4-5:\n    context_window: 1000\n{FAST_RETRY}"
    );
    let r = run_in(&mock, &repo, &yaml);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3, "stderr: {}", r.stderr);
    assert!(!is_compaction_request(&reqs[0]));
    assert!(is_compaction_request(&reqs[1]));
    // The summarizer saw the tool call and its result.
    let seen = reqs[1].message_text(0);
    assert!(seen.contains("[assistant called Glob]"), "{seen}");
    assert!(seen.contains("a.txt"), "{seen}");
    assert_eq!(reqs[2].messages().len(), 1);
    assert!(
        reqs[2]
            .message_text(0)
            .contains("Listed the files; next: finish.")
    );
    let boundary = r.system("compact_boundary");
    assert_eq!(boundary.len(), 1);
    // 920 tokens of real usage plus the tool result: past 85% of 1000.
    assert!(
        boundary[0]["compact_metadata"]["pre_tokens"]
            .as_u64()
            .unwrap()
            >= 920
    );
    assert_eq!(r.result_frame()["num_turns"], 2);
    assert_compact_records(
        &repo.transcript().unwrap(),
        "Listed the files; next: finish.",
    );
    // The tool result before the boundary stays in the transcript in full.
    assert!(
        repo.transcript()
            .unwrap()
            .iter()
            .any(|rec| rec["toolUseResult"].is_object() || rec["toolUseResult"].is_string())
    );
    mock.assert_clean();
}

/// When the system prompt and tool schemas alone pass the threshold, compacting cannot help:
/// after three such compactions runner stops trying instead of compacting every turn.
#[test]
fn autocompact_stops_after_three_compactions_that_do_not_help() {
    let tool = |id: &str| {
        Resp::new()
            .tool_use(id, "Glob", json!({"pattern": "*.txt"}))
            .usage(900, 20)
            .turn()
    };
    let summary = || {
        Resp::new()
            .text("Globbed; next: glob again.")
            .usage(50, 10)
            .turn()
    };
    let mock = MockAnthropic::start(vec![
        tool("toolu_1"),
        summary(),
        tool("toolu_2"),
        summary(),
        tool("toolu_3"),
        summary(),
        tool("toolu_4"),
        Resp::new().text("Done.").usage(900, 5).turn(),
    ]);
    let repo = TestRepo::new();
    repo.write("a.txt", "hello\n");
    // A 200-token window: the system prompt and tool schemas alone fill it.
    let yaml = format!(
        "name: t1\nprompt: \"do it\"\nmodels:\n  claude-sonnet-4-5:\n    context_window: 200\n{FAST_RETRY}"
    );
    let r = run_in(&mock, &repo, &yaml);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    let compactions = reqs.iter().filter(|r| is_compaction_request(r)).count();
    assert_eq!(compactions, 3, "stderr: {}", r.stderr);
    assert_eq!(reqs.len(), 8);
    assert!(
        !is_compaction_request(&reqs[7]),
        "the last request is a turn"
    );
    assert_eq!(r.result_frame()["num_turns"], 5);
    mock.assert_clean();
}

#[test]
fn three_failed_compactions_end_with_context_exhausted() {
    let mock = MockAnthropic::start(vec![
        prompt_too_long(),
        prompt_too_long(),
        prompt_too_long(),
        prompt_too_long(),
    ]);
    let repo = TestRepo::new();
    let r = run_in(
        &mock,
        &repo,
        &format!("name: t1\nprompt: \"do it\"\n{FAST_RETRY}"),
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    assert!(reqs[1..].iter().all(is_compaction_request));
    // Each retry of the summarizer gets a smaller share of the window... or the same text
    // when it is already small; never a larger one.
    let sizes: Vec<usize> = reqs[1..].iter().map(|r| r.message_text(0).len()).collect();
    assert!(sizes.windows(2).all(|w| w[1] <= w[0]), "{sizes:?}");
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "context_exhausted");
    assert_eq!(res["terminal_reason"], "prompt_too_long");
    assert!(
        res["errors"].to_string().contains("3 times in a row"),
        "{res}"
    );
    assert!(r.system("compact_boundary").is_empty());
    mock.assert_clean();
}

#[test]
fn a_compaction_that_does_not_shrink_the_request_ends_the_task() {
    // The task itself does not fit: after compacting, the server rejects a request as large as
    // before. One compaction call, not three.
    let mock = MockAnthropic::start(vec![
        prompt_too_long_at(210_000),
        Resp::new().text("summary").turn(),
        prompt_too_long_at(210_000),
    ]);
    let repo = TestRepo::new();
    let r = run_in(
        &mock,
        &repo,
        &format!("name: t1\nprompt: \"do it\"\n{FAST_RETRY}"),
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    assert_eq!(mock.requests().len(), 3);
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "context_exhausted");
    assert_eq!(res["terminal_reason"], "prompt_too_long");
    let errors = res["errors"].to_string();
    assert!(
        errors.contains("did not shrink the request below the size the server rejected")
            && errors.contains("210000 tokens; the model takes at most 200000"),
        "{errors}"
    );
    assert_eq!(r.system("compact_boundary").len(), 1);
    mock.assert_clean();
}

#[test]
fn a_compaction_that_is_still_too_long_counts_as_a_failure() {
    // Each compaction shrinks the request, but not enough, three times.
    let summary = || Resp::new().text("summary").turn();
    let mock = MockAnthropic::start(vec![
        prompt_too_long_at(230_000),
        summary(),
        prompt_too_long_at(220_000),
        summary(),
        prompt_too_long_at(210_000),
        summary(),
        prompt_too_long_at(205_000),
    ]);
    let repo = TestRepo::new();
    let r = run_in(
        &mock,
        &repo,
        &format!("name: t1\nprompt: \"do it\"\n{FAST_RETRY}"),
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    assert_eq!(mock.requests().len(), 7);
    assert_eq!(r.result_frame()["runner_outcome"], "context_exhausted");
    assert_eq!(r.system("compact_boundary").len(), 3);
    mock.assert_clean();
}

#[test]
fn microcompact_clears_old_results_in_requests_but_not_in_the_transcript() {
    let big = "line of file content\n".repeat(200); // 4200 bytes
    let repo = TestRepo::new();
    let path = repo.write("big.txt", &big).display().to_string();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": path}))
            .usage(2_000, 10)
            .turn(),
        Resp::new()
            .id("msg_2")
            .tool_use("toolu_2", "Read", json!({"file_path": path}))
            .usage(3_000, 10)
            .turn(),
        Resp::new().id("msg_3").text("Done.").usage(4_000, 5).turn(),
    ]);
    let yaml = format!(
        "name: t1\nprompt: \"do it\"\nmodels:\n  claude-sonnet-4-5:\n    context_window: 10000\ncontext:\n  microcompact_threshold: 0.2\n  microcompact_keep_turns: 1\n  microcompact_min_savings_tokens: 500\n  autocompact: false\n{FAST_RETRY}"
    );
    let r = run_in(&mock, &repo, &yaml);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    // Second request: only one turn of results, kept.
    assert!(
        reqs[1]
            .tool_result_text("toolu_1")
            .unwrap()
            .contains("line of file content")
    );
    // Third: the first result is a stub, the most recent one is kept.
    let first = reqs[2].tool_result_text("toolu_1").unwrap();
    assert!(
        first.starts_with("[old tool result cleared: Read output of"),
        "{first}"
    );
    assert!(
        reqs[2]
            .tool_result_text("toolu_2")
            .unwrap()
            .contains("line of file content")
    );
    // The transcript keeps the full result.
    let transcript = repo.transcript().unwrap();
    let stored = transcript
        .iter()
        .find(|rec| rec["message"]["content"][0]["tool_use_id"] == "toolu_1")
        .expect("tool result record");
    assert!(
        stored["message"]["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("line of file content")
    );
    mock.assert_clean();
}

#[test]
fn stop_hooks_do_not_run_after_an_api_error() {
    let mock = MockAnthropic::start(vec![http_error(401)]);
    let repo = TestRepo::new();
    let out_dir = tempfile::tempdir().unwrap();
    let marker = out_dir.path().join("stop-ran");
    let yaml = format!(
        "name: t1\nprompt: \"do it\"\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: {:?}\n",
        format!("touch {}", marker.display())
    );
    let r = run_in(&mock, &repo, &yaml);
    assert_eq!(r.code, Some(4), "stderr: {}", r.stderr);
    assert_eq!(r.result_frame()["runner_outcome"], "api_error");
    assert!(!marker.exists(), "a Stop hook ran after an API error");
    mock.assert_clean();
}

#[test]
fn a_failed_autocompact_lets_the_request_go_out_as_it_is() {
    // The summarizer answers with no text: the compaction fails, the task goes on.
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Glob", json!({"pattern": "*.txt"}))
            .usage(900, 20)
            .turn(),
        Resp::new()
            .tool_use("toolu_x", "Glob", json!({"pattern": "*"}))
            .turn(),
        Resp::new().text("Done.").usage(200, 5).turn(),
    ]);
    let repo = TestRepo::new();
    let yaml = format!(
        "name: t1\nprompt: \"do it\"\nmodels:\n  claude-sonnet-4-5:\n    context_window: 1000\n{FAST_RETRY}"
    );
    let r = run_in(&mock, &repo, &yaml);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(is_compaction_request(&reqs[1]));
    // The main request carries the whole conversation, tool result included.
    assert!(!is_compaction_request(&reqs[2]));
    assert!(reqs[2].tool_result_text("toolu_1").is_some());
    assert!(r.system("compact_boundary").is_empty());
    assert!(r.stderr.contains("autocompact failed"), "{}", r.stderr);
    mock.assert_clean();
}
