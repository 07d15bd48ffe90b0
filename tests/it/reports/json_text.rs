//! The result object, the `json` format and the `text` format.

use std::sync::Arc;

use runner::events::{Denial, RunEvent, Sink};
use runner::outcome::{Outcome, OutcomeKind};
use runner::report::json::{JsonSink, result_value};
use runner::report::text::render_text;
use serde_json::{Value, json};

use crate::support::Buf;
use runner_test_support::script;

#[test]
fn success_result_has_sdk_fields_and_result_text() {
    let v = result_value(&script::success());
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "type",
            "subtype",
            "is_error",
            "duration_ms",
            "duration_api_ms",
            "num_turns",
            "result",
            "stop_reason",
            "session_id",
            "total_cost_usd",
            "usage",
            "modelUsage",
            "permission_denials",
            "terminal_reason",
            "uuid",
            "runner_outcome",
            "runner_task",
            "runner_transcript_path",
            "runner_exit_code",
        ]
    );
    assert_eq!(v["total_cost_usd"], 0.0125);
    assert_eq!(v["stop_reason"], "end_turn");
    assert_eq!(
        v["usage"],
        json!({"input_tokens": 30, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 4000, "output_tokens": 45})
    );
    assert_eq!(
        v["modelUsage"]["claude-sonnet-4-5"],
        json!({"inputTokens": 30, "outputTokens": 45, "cacheReadInputTokens": 4000, "cacheCreationInputTokens": 200,
               "webSearchRequests": 0, "costUSD": 0.0125, "contextWindow": 200000, "maxOutputTokens": 64000})
    );
    assert_eq!(
        v["runner_transcript_path"],
        ".runner/fix-typo/session.jsonl"
    );
}

#[test]
fn error_result_has_errors_unknown_cost_is_null() {
    let mut r = script::result(Outcome::new(
        OutcomeKind::MaxTurns,
        "Reached maximum number of turns (2)",
    ));
    r.total_cost_usd = None;
    r.model_usage.values_mut().for_each(|m| m.cost_usd = None);
    r.stop_reason = None;
    r.permission_denials.push(Denial {
        uuid: String::new(),
        tool_name: "Bash".into(),
        tool_use_id: "toolu_9".into(),
        tool_input: json!({"command": "curl x"}),
        reason: "denied by rule Bash(curl:*)".into(),
        write: false,
    });
    let v = result_value(&r);
    assert_eq!(v["subtype"], "error_max_turns");
    assert_eq!(v["is_error"], true);
    assert!(v.get("result").is_none());
    assert_eq!(v["errors"], json!(["Reached maximum number of turns (2)"]));
    assert_eq!(v["total_cost_usd"], Value::Null);
    assert_eq!(v["modelUsage"]["claude-sonnet-4-5"]["costUSD"], Value::Null);
    assert_eq!(v["stop_reason"], Value::Null);
    assert_eq!(v["terminal_reason"], "max_turns");
    assert_eq!(v["runner_exit_code"], 3);
    assert_eq!(
        v["permission_denials"],
        json!([{"tool_name": "Bash", "tool_use_id": "toolu_9", "tool_input": {"command": "curl x"},
                "runner_reason": "denied by rule Bash(curl:*)"}])
    );
    // Explicit errors win over the outcome message.
    r.errors = vec!["first".into(), "second".into()];
    assert_eq!(result_value(&r)["errors"], json!(["first", "second"]));
}

#[test]
fn json_sink_prints_one_redacted_line_per_result_only() {
    let buf = Buf::default();
    let mut sink = JsonSink::new(buf.shared(), Arc::new(script::redactor()));
    for e in script::events() {
        sink.emit(&e).unwrap();
    }
    let mut leaked = script::success();
    leaked.result_text = format!("the key is {}", script::SECRET);
    sink.emit(&RunEvent::Result(Box::new(leaked))).unwrap();
    let lines = buf.lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], result_value(&script::success()));
    assert_eq!(
        lines[1]["result"],
        "the key is [REDACTED:ANTHROPIC_API_KEY]"
    );
}

#[test]
fn text_single_task() {
    assert_eq!(
        render_text(&script::success(), false),
        "Fixed the typo: `teh` → `the`.\n"
    );
    let mut r = script::result(Outcome::new(OutcomeKind::ApiError, "401 invalid x-api-key"));
    assert_eq!(render_text(&r, false), "401 invalid x-api-key\n");
    r.errors = vec!["a".into(), "b\n".into()];
    assert_eq!(render_text(&r, false), "a\nb\n");
}

#[test]
fn text_several_tasks() {
    let mut fail = script::result(Outcome::new(OutcomeKind::ChecksFailed, "cargo test failed"));
    fail.task_name = "other".into();
    let out: String = [script::success(), fail]
        .iter()
        .map(|r| render_text(r, true))
        .collect();
    assert_eq!(
        out,
        "== fix-typo (success) ==\nFixed the typo: `teh` → `the`.\n== other (checks_failed) ==\ncargo test failed\n"
    );
}

#[test]
fn redact_result_covers_text_reports() {
    let red = script::redactor();
    let mut r = script::result(Outcome::new(
        OutcomeKind::AgentError,
        format!("refused; key {}", script::SECRET),
    ));
    r.result_text = format!("answer {}", script::SECRET);
    let red_r = r.redacted(&red);
    let text = render_text(&red_r, true);
    assert!(!text.contains(script::SECRET));
    assert!(text.contains("refused; key [REDACTED:ANTHROPIC_API_KEY]"));
    assert_eq!(red_r.result_text, "answer [REDACTED:ANTHROPIC_API_KEY]");
}
