//! A small scripted run with fixed ids and times: prompt → assistant text + tool_use → tool
//! result → final text → result.

use std::collections::BTreeMap;
use std::path::PathBuf;

use runner::events::{
    AssistantMeta, BlockRecord, Denial, InitInfo, ModelUsage, RunEvent, RunResult,
};
use runner::model::{ContentBlock, StopReason, ToolSpec, Usage};
use runner::outcome::{Outcome, OutcomeKind};
use serde_json::json;

pub const SESSION: &str = "11111111-1111-4111-8111-111111111111";
pub const SECRET: &str = "sk-test-SECRET-value-42";

pub fn init() -> InitInfo {
    InitInfo {
        uuid: String::new(),
        session_id: SESSION.into(),
        task_name: "fix-typo".into(),
        spec_path: PathBuf::from("tasks/fix-typo.yaml"),
        spec: json!({"name": "fix-typo", "prompt": "Fix the typo in README.md", "max_turns": 5}),
        spec_digest: "0f".repeat(32),
        system_prompt: "You are runner, an unattended coding agent.".into(),
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
        }],
        model: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        permission_mode: "dontAsk".into(),
        cwd: PathBuf::from("/work/repo"),
        git_branch: Some("main".into()),
        git_base_commit: Some("a".repeat(40)),
        version: "0.1.0".into(),
        sandbox: None,
        mcp_servers: Vec::new(),
    }
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 2000,
    }
}

fn meta(id: &str, req: &str, u: Usage, stop: Option<StopReason>) -> AssistantMeta {
    AssistantMeta {
        message_id: id.into(),
        model: "claude-sonnet-4-5".into(),
        request_id: Some(req.into()),
        usage: u,
        stop_reason: stop,
        stop_sequence: None,
    }
}

pub fn result(outcome: Outcome) -> RunResult {
    let total = Usage {
        input_tokens: 30,
        output_tokens: 45,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 4000,
    };
    let mut model_usage = BTreeMap::new();
    model_usage.insert(
        "claude-sonnet-4-5".to_string(),
        ModelUsage {
            usage: total,
            cost_usd: Some(0.0125),
            context_window: Some(200_000),
            max_output_tokens: Some(64_000),
        },
    );
    RunResult {
        session_id: SESSION.into(),
        task_name: "fix-typo".into(),
        spec_path: PathBuf::from("tasks/fix-typo.yaml"),
        spec_line: 2,
        model: "claude-sonnet-4-5".into(),
        outcome,
        num_turns: 2,
        duration_ms: 4321,
        duration_api_ms: 3000,
        usage: total,
        model_usage,
        total_cost_usd: Some(0.0125),
        permission_denials: Vec::new(),
        stop_reason: Some(StopReason::EndTurn),
        result_text: "Fixed the typo: `teh` → `the`.".into(),
        errors: Vec::new(),
        transcript_path: Some(PathBuf::from(".runner/fix-typo/session.jsonl")),
        started_at: "2026-01-02T03:04:05".into(),
        uuid: "99999999-9999-4999-8999-999999999999".into(),
        checks: vec![],
        structured_output: None,
        git: None,
        sandbox: None,
        network: Default::default(),
        commands: Vec::new(),
        integrity: Vec::new(),
        timing: Default::default(),
        rate_limit: Default::default(),
        report_errors: vec![],
    }
}

pub fn success() -> RunResult {
    result(Outcome::new(OutcomeKind::Success, "completed"))
}

/// The scripted run. The tool result quotes the secret so redaction is visible.
pub fn events() -> Vec<RunEvent> {
    let text1 = ContentBlock::text("I'll read the README first.");
    let tool = ContentBlock::ToolUse {
        id: "toolu_01".into(),
        name: "Read".into(),
        input: json!({"file_path": "/work/repo/README.md"}),
    };
    let m1_partial = meta("msg_01", "req_01", usage(10, 1), None);
    let m1 = meta("msg_01", "req_01", usage(10, 30), Some(StopReason::ToolUse));
    let text2 = ContentBlock::text("Fixed the typo: `teh` → `the`.");
    let m2_partial = meta("msg_02", "req_02", usage(20, 1), None);
    let m2 = meta("msg_02", "req_02", usage(20, 15), Some(StopReason::EndTurn));
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

/// Extra events exercising the off-chain records.
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

pub fn redactor() -> runner::redact::Redactor {
    runner::redact::Redactor::new(vec![("ANTHROPIC_API_KEY".into(), SECRET.into())])
}
