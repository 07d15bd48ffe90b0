//! End-to-end Stop, UserPromptSubmit, SessionStart, SessionEnd and `continue: false` hooks:
//! the real binary against the mock Anthropic server.

use crate::support::*;
use serde_json::{Value, json};

/// A spec whose `hooks:` has one command hook for `event`.
fn spec_with_hook(event: &str, command: &str) -> String {
    format!(
        "name: hooks\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\npermissions:\n  allow: [Bash]\nhooks:\n  {event}:\n    - hooks:\n        - type: command\n          command: {command:?}\n"
    )
}

#[test]
fn stop_hook_blocks_once_then_allows() {
    let mock = MockAnthropic::start(vec![text_turn("first answer"), text_turn("tests pass now")]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let marker = out.path().join("stop-blocked");
    let log = out.path().join("stop-stdin.jsonl");
    // Blocks the first stop with a reason; lets the second one through.
    let hook = format!(
        "cat >> {log}; echo >> {log}; if [ -e {m} ]; then exit 0; fi; touch {m}; echo '{{\"decision\":\"block\",\"reason\":\"run the tests first\"}}'",
        log = log.display(),
        m = marker.display()
    );
    // The hook keeps its log and marker outside the workdir: the sandbox must allow it.
    let yaml = format!(
        "{}{}",
        spec_with_hook("Stop", &hook),
        sandbox_write(out.path())
    );
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let result = run.result();
    assert_eq!(result["runner_outcome"], json!("success"), "{result}");
    assert_eq!(result["num_turns"], json!(2), "{result}");
    assert_eq!(result["result"], json!("tests pass now"), "{result}");
    assert_eq!(mock.served(), 2);
    // The model got the reason as a user message after its first answer.
    let second = mock.request(1);
    let n = second.messages().len();
    assert_eq!(second.message_text(n - 2), "first answer");
    assert!(
        second.message_text(n - 1).contains("run the tests first"),
        "{:?}",
        second.messages()
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    let inputs: Vec<Value> = logged
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), 2, "{logged}");
    assert_eq!(inputs[0]["hook_event_name"], json!("Stop"));
    assert_eq!(inputs[0]["stop_hook_active"], json!(false));
    assert_eq!(inputs[0]["last_assistant_message"], json!("first answer"));
    assert_eq!(inputs[1]["stop_hook_active"], json!(true));
    assert_eq!(inputs[1]["last_assistant_message"], json!("tests pass now"));
    mock.assert_clean();
}

#[test]
fn stop_hook_blocking_forever_ends_after_eight_blocks() {
    let turns = (0..9).map(|i| text_turn(&format!("answer {i}"))).collect();
    let mock = MockAnthropic::start(turns);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec_with_hook("Stop", "echo again >&2; exit 2"),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let result = run.result();
    assert_eq!(result["num_turns"], json!(9), "{result}");
    assert_eq!(mock.served(), 9);
    mock.assert_clean();
}

#[test]
fn stop_hook_continue_false_is_hook_stopped() {
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec_with_hook(
            "Stop",
            r#"echo '{"continue":false,"stopReason":"quota used up"}'"#,
        ),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(1);
    let result = run.result();
    assert_eq!(result["runner_outcome"], json!("agent_error"), "{result}");
    assert_eq!(result["terminal_reason"], json!("hook_stopped"), "{result}");
    assert!(result.to_string().contains("quota used up"), "{result}");
    mock.assert_clean();
}

#[test]
fn pre_tool_use_continue_false_stops_the_run() {
    let mock = MockAnthropic::start(vec![tool_turn(
        "t1",
        "Bash",
        json!({"command": "touch x.txt"}),
    )]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec_with_hook(
            "PreToolUse",
            r#"echo '{"continue":false,"stopReason":"frozen"}'"#,
        ),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(1);
    let result = run.result();
    assert!(!repo.exists("x.txt"));
    assert_eq!(result["terminal_reason"], json!("hook_stopped"), "{result}");
    assert_eq!(mock.served(), 1);
    mock.assert_clean();
}

#[test]
fn user_prompt_submit_block_ends_the_task_before_any_request() {
    let mock = MockAnthropic::start(vec![]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec_with_hook(
            "UserPromptSubmit",
            "echo 'prompt names a secret' >&2; exit 2",
        ),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(1);
    let result = run.result();
    assert_eq!(result["terminal_reason"], json!("hook_stopped"), "{result}");
    assert!(
        result.to_string().contains("prompt names a secret"),
        "{result}"
    );
    assert_eq!(mock.served(), 0);
}

#[test]
fn session_start_and_prompt_context_reach_the_model_and_session_end_runs() {
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let end = out.path().join("end.json");
    let yaml = format!(
        "name: hooks\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\nhooks:\n  SessionStart:\n    - matcher: startup\n      hooks:\n        - type: command\n          command: \"echo 'node is 20'\"\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          command: {submit:?}\n  SessionEnd:\n    - hooks:\n        - type: command\n          command: {end_cmd:?}\n",
        submit = r#"echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"branch is main"}}'"#,
        end_cmd = format!("cat > {}", end.display()),
    ) + &sandbox_write(out.path());
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let first = mock.request(0).message_text(0);
    assert!(first.starts_with("do it"), "{first}");
    assert!(first.contains("node is 20"), "{first}");
    assert!(first.contains("branch is main"), "{first}");
    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&end).unwrap()).unwrap();
    assert_eq!(stdin["hook_event_name"], json!("SessionEnd"));
    assert_eq!(stdin["reason"], json!("other"));
    mock.assert_clean();
}

#[test]
fn post_tool_use_failure_feedback_reaches_the_model() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "exit 3"})),
        text_turn("saw it"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let hook = r#"grep -q '"hook_event_name":"PostToolUseFailure"' && echo 'read the build log' >&2; exit 2"#;
    let spec = write_spec(repo.path(), &spec_with_hook("PostToolUseFailure", hook));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(
        text.contains("PostToolUseFailure hook feedback: read the build log"),
        "{text}"
    );
    mock.assert_clean();
}
