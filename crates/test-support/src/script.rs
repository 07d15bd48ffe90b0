//! A small scripted run with fixed ids and times: prompt → assistant text + tool_use → tool
//! result → final text → result. The integration tests' report snapshots and the transcript
//! benchmark feed it to the sinks.
//!
//! It is built on runner-report's own contract fixtures (`runner_report::contract::fixtures`,
//! the every-variant events its unit tests pin): the same session, task, spec, tool and
//! responses, with what this run has on top (a tool schema with `required`, costs, a secret in
//! the tool result so redaction is visible).

use runner_model::{ContentBlock, StopReason, Usage};
use runner_protocol::outcome::{Outcome, OutcomeKind};
use runner_report::contract::fixtures;
use runner_report::events::{BlockRecord, Denial, InitInfo, ModelUsage, RunEvent, RunResult};
use runner_report::redact::Redactor;
use serde_json::json;

/// The session id of the run.
pub const SESSION: &str = fixtures::SESSION;

/// The API key the run's redactor hides; the tool result quotes it.
pub const SECRET: &str = "sk-test-SECRET-value-42";

/// The run's start: the contract fixture's, its `Read` tool's schema requiring `file_path`.
pub fn init() -> InitInfo {
    let mut init = fixtures::init();
    for tool in &mut init.tools {
        tool.input_schema["required"] = json!(["file_path"]);
    }
    init
}

/// The run's result with `outcome`: two turns, their usage and cost, the final text.
pub fn result(outcome: Outcome) -> RunResult {
    let total = Usage {
        input_tokens: 30,
        output_tokens: 45,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 4000,
    };
    let mut r = fixtures::result(outcome);
    r.usage = total;
    r.model_usage.insert(
        "claude-sonnet-4-5".to_string(),
        ModelUsage {
            usage: total,
            cost_usd: Some(0.0125),
            context_window: Some(200_000),
            max_output_tokens: Some(64_000),
        },
    );
    r.total_cost_usd = Some(0.0125);
    r.stop_reason = Some(StopReason::EndTurn);
    r.result_text = "Fixed the typo: `teh` → `the`.".into();
    r.transcript_path = Some(".runner/fix-typo/session.jsonl".into());
    r.uuid = "99999999-9999-4999-8999-999999999999".into();
    r
}

/// [`result`] with a success outcome.
pub fn success() -> RunResult {
    result(Outcome::new(OutcomeKind::Success, "completed"))
}

/// The scripted run. The tool result quotes [`SECRET`] so redaction is visible.
pub fn events() -> Vec<RunEvent> {
    let usage = fixtures::usage;
    let meta = fixtures::meta;
    let text1 = ContentBlock::text("I'll read the README first.");
    let tool = ContentBlock::ToolUse {
        id: "toolu_01".into(),
        name: "Read".into(),
        input: json!({"file_path": "/work/repo/README.md"}),
    };
    let m1_partial = meta("msg_01", Some("req_01"), usage(10, 1), None);
    let m1 = meta(
        "msg_01",
        Some("req_01"),
        usage(10, 30),
        Some(StopReason::ToolUse),
    );
    let text2 = ContentBlock::text("Fixed the typo: `teh` → `the`.");
    let m2_partial = meta("msg_02", Some("req_02"), usage(20, 1), None);
    let m2 = meta(
        "msg_02",
        Some("req_02"),
        usage(20, 15),
        Some(StopReason::EndTurn),
    );
    vec![
        RunEvent::Init(Box::new(init())),
        RunEvent::UserText {
            uuid: "u-0001".into(),
            parent_uuid: None,
            text: "Fix the typo in README.md".into(),
        },
        RunEvent::AssistantBlockStreamed {
            uuid: "a-0001".into(),
            meta: m1_partial.clone(),
            block: text1.clone(),
        },
        RunEvent::AssistantBlockStreamed {
            uuid: "a-0002".into(),
            meta: m1_partial,
            block: tool.clone(),
        },
        RunEvent::AssistantResponse {
            meta: m1,
            blocks: vec![
                BlockRecord {
                    uuid: "a-0001".into(),
                    parent_uuid: Some("u-0001".into()),
                    block: text1,
                },
                BlockRecord {
                    uuid: "a-0002".into(),
                    parent_uuid: Some("a-0001".into()),
                    block: tool,
                },
            ],
        },
        RunEvent::ToolResult {
            uuid: "t-0001".into(),
            parent_uuid: Some("a-0002".into()),
            source_assistant_uuid: "a-0002".into(),
            block: ContentBlock::ToolResult {
                tool_use_id: "toolu_01".into(),
                content: format!("     1\tteh project (token {SECRET})"),
                is_error: false,
            },
            tool_use_result: Some(json!({
                "type": "text",
                "file": {"filePath": "/work/repo/README.md", "content": format!("teh project (token {SECRET})"), "numLines": 1, "startLine": 1, "totalLines": 1}
            })),
        },
        RunEvent::AssistantBlockStreamed {
            uuid: "a-0003".into(),
            meta: m2_partial,
            block: text2.clone(),
        },
        RunEvent::AssistantResponse {
            meta: m2,
            blocks: vec![BlockRecord {
                uuid: "a-0003".into(),
                parent_uuid: Some("t-0001".into()),
                block: text2,
            }],
        },
        RunEvent::Result(Box::new(success())),
    ]
}

/// Extra events exercising the off-chain records: an abandoned attempt, a denial, a follow-up
/// prompt.
pub fn off_chain_events() -> Vec<RunEvent> {
    vec![
        RunEvent::AttemptAbandoned {
            uuid: "x-0001".into(),
            attempt: 1,
            error: "overloaded_error: Overloaded".into(),
            streamed_uuids: vec!["a-0009".into()],
        },
        RunEvent::PermissionDenied(Denial {
            uuid: String::new(),
            tool_name: "Bash".into(),
            tool_use_id: "toolu_02".into(),
            tool_input: json!({"command": "rm -rf /"}),
            reason: "no allow rule matches Bash(rm -rf /)".into(),
            write: false,
        }),
        RunEvent::UserText {
            uuid: "u-0002".into(),
            parent_uuid: Some("a-0003".into()),
            text: "Please also update CHANGELOG.md".into(),
        },
    ]
}

/// The redactor of the run: [`SECRET`] as `ANTHROPIC_API_KEY`.
pub fn redactor() -> Redactor {
    Redactor::new(vec![("ANTHROPIC_API_KEY".into(), SECRET.into())])
}
