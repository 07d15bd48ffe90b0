//! Run events covering every [`RunEvent`] variant and its branches, with fixed ids: the unit
//! tests of the transcript records and stream-json frames feed them to both and pin the bytes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;

use crate::events::{
    AssistantMeta, BlockRecord, CheckResult, Denial, InitInfo, ModelUsage, RunEvent, RunResult,
};
use crate::model::{ContentBlock, StopReason, ToolSpec, Usage};
use crate::outcome::{Outcome, OutcomeKind};
use runner_protocol::summary::GitSummary;

/// The session id of every fixture.
pub const SESSION: &str = "11111111-1111-4111-8111-111111111111";

/// A fixed timestamp for the records' clock.
pub const TIMESTAMP: &str = "2026-01-02T03:04:05.678Z";

/// A counter-based uuid source: `gen-1`, `gen-2`, ...
pub fn counter() -> impl FnMut() -> String + Send + 'static {
    let mut n = 0;
    move || {
        n += 1;
        format!("gen-{n}")
    }
}

/// The run's start; `uuid` empty, so the sinks draw one from their uuid source.
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
            input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
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

/// `input` and `output` tokens, with 100 tokens written to the prompt cache and 2,000 read.
pub fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 2000,
    }
}

/// A `claude-sonnet-4-5` response's metadata.
pub fn meta(
    id: &str,
    request: Option<&str>,
    usage: Usage,
    stop: Option<StopReason>,
) -> AssistantMeta {
    AssistantMeta {
        message_id: id.into(),
        model: "claude-sonnet-4-5".into(),
        request_id: request.map(str::to_string),
        usage,
        stop_reason: stop,
        stop_sequence: None,
    }
}

/// A verify check named `name` that passed or failed, on `attempt`.
pub fn check(name: &str, passed: bool, attempt: u32) -> CheckResult {
    CheckResult {
        name: name.into(),
        command: format!("{name} --quiet"),
        passed,
        exit_code: Some(if passed { 0 } else { 101 }),
        timed_out: false,
        duration_ms: 1234,
        output: if passed {
            String::new()
        } else {
            "test foo ... FAILED\n".into()
        },
        attempt,
        report_only: false,
    }
}

/// A finished run with `outcome`: no cost, no checks, no git, no structured output.
pub fn result(outcome: Outcome) -> RunResult {
    let total = usage(30, 45);
    let mut model_usage = BTreeMap::new();
    model_usage.insert(
        "claude-sonnet-4-5".to_string(),
        ModelUsage {
            usage: total,
            cost_usd: None,
            context_window: None,
            max_output_tokens: None,
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
        total_cost_usd: None,
        permission_denials: Vec::new(),
        stop_reason: None,
        result_text: String::new(),
        errors: Vec::new(),
        transcript_path: None,
        started_at: "2026-01-02T03:04:05".into(),
        uuid: "r-0001".into(),
        checks: Vec::new(),
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

/// A successful run with everything a result can carry.
pub fn full_success() -> RunResult {
    let mut r = result(Outcome::new(OutcomeKind::Success, "completed"));
    r.total_cost_usd = Some(0.0125);
    if let Some(mu) = r.model_usage.get_mut("claude-sonnet-4-5") {
        mu.cost_usd = Some(0.0125);
        mu.context_window = Some(200_000);
        mu.max_output_tokens = Some(64_000);
    }
    r.model_usage.insert(
        "claude-haiku-4-5".to_string(),
        ModelUsage {
            usage: usage(3, 4),
            cost_usd: Some(1e-6),
            context_window: Some(200_000),
            max_output_tokens: Some(8192),
        },
    );
    r.permission_denials = vec![denial()];
    r.stop_reason = Some(StopReason::EndTurn);
    r.result_text = "Fixed the typo: `teh` → `the`.".into();
    r.transcript_path = Some(PathBuf::from(".runner/fix-typo/session.jsonl"));
    r.checks = vec![check("cargo test", true, 2)];
    r.structured_output = Some(json!({"fixed": true, "files": ["README.md"]}));
    r.git = Some(GitSummary {
        isolated: true,
        base_commit: "b".repeat(40),
        changed: true,
        files_changed: 1,
        insertions: 1,
        deletions: 1,
        patch: Some(PathBuf::from(".runner/fix-typo/changes.patch")),
        branch: Some("runner/fix-typo".into()),
        commit: Some("c".repeat(40)),
        worktree: None,
        files: vec![runner_protocol::summary::FileChange {
            path: "README.md".into(),
            status: "modified".into(),
            insertions: 1,
            deletions: 1,
            binary: false,
        }],
    });
    r.commands = vec![crate::events::CommandRun {
        command: "cargo test".into(),
        exit_code: Some(0),
        duration_ms: 2500,
        timed_out: false,
    }];
    r.timing = crate::events::TimingTotals {
        turns: 2,
        wall_ms: 4000,
        phases: crate::events::Phases {
            request_build_ms: 10,
            retry_ms: 0,
            ttfb_ms: 900,
            stream_ms: 2000,
            tools_ms: 1050,
            hooks_ms: 40,
        },
    };
    r
}

fn denial() -> Denial {
    Denial {
        uuid: String::new(),
        tool_name: "Bash".into(),
        tool_use_id: "toolu_02".into(),
        tool_input: json!({"command": "rm -rf /"}),
        reason: "no allow rule matches Bash(rm -rf /)".into(),
        write: false,
    }
}

/// Every event variant (and the branches its rendering takes), named, in a plausible order.
pub fn events() -> Vec<(&'static str, RunEvent)> {
    let mut all = first_turn();
    all.extend(second_turn());
    all.extend(off_chain_events());
    all.extend(closing_events());
    all
}

/// The first turn: the prompt, a streamed response that calls a tool, its result and denials.
fn first_turn() -> Vec<(&'static str, RunEvent)> {
    let text = ContentBlock::text("I'll read the README first.");
    let tool_use = ContentBlock::ToolUse {
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
    let mut denied = denial();
    denied.uuid = "d-0001".into();
    vec![
        ("init", RunEvent::Init(Box::new(init()))),
        (
            "prompt",
            RunEvent::UserText {
                uuid: "u-0001".into(),
                parent_uuid: None,
                text: "Fix the typo in README.md".into(),
            },
        ),
        (
            "streamed_text",
            RunEvent::AssistantBlockStreamed {
                uuid: "a-0001".into(),
                meta: m1_partial.clone(),
                block: text.clone(),
            },
        ),
        (
            "streamed_tool_use",
            RunEvent::AssistantBlockStreamed {
                uuid: "a-0002".into(),
                meta: m1_partial,
                block: tool_use.clone(),
            },
        ),
        (
            "response",
            RunEvent::AssistantResponse {
                meta: m1,
                blocks: vec![
                    BlockRecord {
                        uuid: "a-0001".into(),
                        parent_uuid: Some("u-0001".into()),
                        block: text,
                    },
                    BlockRecord {
                        uuid: "a-0002".into(),
                        parent_uuid: Some("a-0001".into()),
                        block: tool_use,
                    },
                ],
            },
        ),
        (
            "tool_result",
            RunEvent::ToolResult {
                uuid: "t-0001".into(),
                parent_uuid: Some("a-0002".into()),
                source_assistant_uuid: "a-0002".into(),
                block: ContentBlock::ToolResult {
                    tool_use_id: "toolu_01".into(),
                    content: "     1\tteh project".into(),
                    is_error: false,
                },
                tool_use_result: Some(json!({
                    "type": "text",
                    "file": {"filePath": "/work/repo/README.md", "numLines": 1}
                })),
            },
        ),
        (
            "denial_generated_uuid",
            RunEvent::PermissionDenied(denial()),
        ),
        ("denial", RunEvent::PermissionDenied(denied)),
        (
            "tool_result_error",
            RunEvent::ToolResult {
                uuid: "t-0002".into(),
                parent_uuid: Some("t-0001".into()),
                source_assistant_uuid: "a-0002".into(),
                block: ContentBlock::ToolResult {
                    tool_use_id: "toolu_02".into(),
                    content: "Permission denied".into(),
                    is_error: true,
                },
                tool_use_result: None,
            },
        ),
    ]
}

/// The second turn: API retries, an abandoned attempt, a response with every kind of block,
/// and the checks around the feedback.
fn second_turn() -> Vec<(&'static str, RunEvent)> {
    let thinking = ContentBlock::Thinking {
        thinking: "The typo is on line 1.".into(),
        signature: "sig-1".into(),
    };
    let cited = ContentBlock::Text {
        text: "Fixed.".into(),
        citations: Some(vec![json!({"type": "char_location", "cited_text": "teh"})]),
    };
    let redacted = ContentBlock::RedactedThinking {
        data: "opaque".into(),
    };
    let other = ContentBlock::Other(json!({"type": "server_tool_use", "id": "srvtoolu_1"}));
    let m2_partial = meta("msg_02", None, usage(20, 1), None);
    let mut m2 = meta(
        "msg_02",
        None,
        usage(20, 15),
        Some(StopReason::StopSequence),
    );
    m2.stop_sequence = Some("###".into());
    vec![
        (
            "api_retry",
            RunEvent::ApiRetry {
                uuid: "r-0001".into(),
                attempt: 1,
                max_retries: 10,
                retry_delay_ms: 500,
                error_status: Some(529),
                error: "rate_limit".into(),
                message: "overloaded_error: Overloaded".into(),
            },
        ),
        (
            "api_retry_no_status",
            RunEvent::ApiRetry {
                uuid: "r-0002".into(),
                attempt: 2,
                max_retries: 10,
                retry_delay_ms: 1000,
                error_status: None,
                error: "unknown".into(),
                message: "connection reset".into(),
            },
        ),
        (
            "streamed_abandoned",
            RunEvent::AssistantBlockStreamed {
                uuid: "a-0003".into(),
                meta: m2_partial.clone(),
                block: thinking.clone(),
            },
        ),
        (
            "attempt_abandoned",
            RunEvent::AttemptAbandoned {
                uuid: "x-0001".into(),
                attempt: 1,
                error: "stream cut".into(),
                streamed_uuids: vec!["a-0003".into()],
            },
        ),
        (
            "streamed_superseding",
            RunEvent::AssistantBlockStreamed {
                uuid: "a-0004".into(),
                meta: m2_partial,
                block: thinking.clone(),
            },
        ),
        (
            "response_all_blocks",
            RunEvent::AssistantResponse {
                meta: m2,
                blocks: vec![
                    BlockRecord {
                        uuid: "a-0004".into(),
                        parent_uuid: Some("t-0002".into()),
                        block: thinking,
                    },
                    BlockRecord {
                        uuid: "a-0005".into(),
                        parent_uuid: Some("a-0004".into()),
                        block: redacted,
                    },
                    BlockRecord {
                        uuid: "a-0006".into(),
                        parent_uuid: Some("a-0005".into()),
                        block: other,
                    },
                    BlockRecord {
                        uuid: "a-0007".into(),
                        parent_uuid: Some("a-0006".into()),
                        block: cited,
                    },
                ],
            },
        ),
        (
            "checks_failed",
            RunEvent::Checks {
                attempt: 1,
                results: vec![check("cargo fmt", true, 1), check("cargo test", false, 1)],
            },
        ),
        (
            "feedback",
            RunEvent::UserText {
                uuid: "u-0002".into(),
                parent_uuid: Some("a-0007".into()),
                text: "check `cargo test` failed".into(),
            },
        ),
        (
            "checks_passed",
            RunEvent::Checks {
                attempt: 2,
                results: vec![check("cargo test", true, 2)],
            },
        ),
    ]
}

/// The off-chain records: worktree, tool start, network, integrity, sandbox and MCP init.
fn off_chain_events() -> Vec<(&'static str, RunEvent)> {
    vec![
        (
            "worktree",
            RunEvent::Worktree {
                path: PathBuf::from("/work/repo/.runner/worktrees/fix-typo"),
                repo_root: PathBuf::from("/work/repo"),
                base_commit: "b".repeat(40),
            },
        ),
        (
            "tool_started",
            RunEvent::ToolStarted {
                uuid: "s-0001".into(),
                tool_use_id: "toolu_02".into(),
                tool_name: "Bash".into(),
                group: Some(crate::process::identity::GroupIdentity {
                    pgid: 4242,
                    start_ticks: 987_654,
                    boot_id: "2f4c6a1e-8d3b-4e7f-9a10-5b6c7d8e9f00".into(),
                }),
            },
        ),
        (
            "network_allowed",
            RunEvent::Network {
                uuid: "n-0001".into(),
                attempt: crate::sandbox::NetworkAttempt {
                    host: "crates.io".into(),
                    port: 443,
                    method: "CONNECT".into(),
                    allowed: true,
                    error: None,
                },
            },
        ),
        (
            "network_refused",
            RunEvent::Network {
                uuid: "n-0002".into(),
                attempt: crate::sandbox::NetworkAttempt {
                    host: "evil.example".into(),
                    port: 443,
                    method: "CONNECT".into(),
                    allowed: false,
                    error: Some(
                        "evil.example:443 is not in this task's sandbox.network list".into(),
                    ),
                },
            },
        ),
        (
            "integrity",
            RunEvent::Integrity {
                uuid: "g-0001".into(),
                change: runner_protocol::summary::IntegrityChange {
                    path: PathBuf::from("/work/repo/.git/hooks/pre-commit"),
                    change: "added".into(),
                    detail: "a file of 24 bytes, mode 755".into(),
                    after: "Bash call toolu_02 (`npm test`)".into(),
                    restored: true,
                    error: None,
                },
            },
        ),
        (
            "init_sandboxed",
            RunEvent::Init(Box::new(InitInfo {
                sandbox: Some(crate::sandbox::SandboxReport {
                    mode: "auto".into(),
                    confined: true,
                    landlock_abi: Some(7),
                    network: "crates.io,*.npmjs.org".into(),
                    writable: vec![
                        PathBuf::from("/work/repo"),
                        PathBuf::from("/tmp/runner-tmp-x"),
                    ],
                    unconfined_because: None,
                    namespaces: Some("root".into()),
                    unix_sockets: vec![],
                    missing: vec![],
                    closed: vec![],
                    home_toolchains: vec![],
                }),
                ..init()
            })),
        ),
        (
            "init_mcp",
            RunEvent::Init(Box::new(InitInfo {
                mcp_servers: vec![
                    crate::events::McpServerStatus {
                        name: "fs".into(),
                        status: "connected".into(),
                        error: None,
                        tools: vec!["mcp__fs__read_text_file".into()],
                    },
                    crate::events::McpServerStatus {
                        name: "github".into(),
                        status: "failed".into(),
                        error: Some("`npx` exited: 1".into()),
                        tools: vec![],
                    },
                ],
                ..init()
            })),
        ),
    ]
}

/// Instructions, fallback, timing, compaction and the results.
fn closing_events() -> Vec<(&'static str, RunEvent)> {
    vec![
        (
            "instructions",
            RunEvent::Instructions {
                uuid: "p-0001".into(),
                files: vec![
                    crate::events::InstructionFile {
                        path: PathBuf::from("/work/repo/crates/core/AGENTS.md"),
                        sha256: "ab".repeat(32),
                        bytes: 120,
                        truncated: false,
                    },
                    crate::events::InstructionFile {
                        path: PathBuf::from("/work/repo/CLAUDE.md"),
                        sha256: "cd".repeat(32),
                        bytes: 50_000,
                        truncated: true,
                    },
                ],
            },
        ),
        (
            "model_fallback",
            RunEvent::ModelFallback {
                uuid: "f-0001".into(),
                from: "claude-opus-4-1".into(),
                to: "claude-sonnet-4-5".into(),
                error: "overloaded_error: Overloaded".into(),
            },
        ),
        (
            "timing",
            RunEvent::Timing {
                uuid: "m-0001".into(),
                turn: 1,
                wall_ms: 3000,
                phases: crate::events::Phases {
                    request_build_ms: 5,
                    retry_ms: 0,
                    ttfb_ms: 800,
                    stream_ms: 1200,
                    tools_ms: 960,
                    hooks_ms: 35,
                },
            },
        ),
        (
            "compact_boundary",
            RunEvent::CompactBoundary {
                uuid: "b-0001".into(),
                logical_parent_uuid: Some("u-0002".into()),
                trigger: "auto",
                pre_tokens: 150_000,
            },
        ),
        (
            "compact_summary",
            RunEvent::CompactSummary {
                uuid: "s-0001".into(),
                parent_uuid: "b-0001".into(),
                text: "Fix the typo in README.md\n\nSummary: README.md line 1 fixed.".into(),
            },
        ),
        ("result_success", RunEvent::Result(Box::new(full_success()))),
        (
            "result_error",
            RunEvent::Result(Box::new({
                let mut r = result(Outcome::new(OutcomeKind::MaxTurns, "turn limit 2 reached"));
                r.errors = vec!["turn limit 2 reached".into(), "second error".into()];
                r.stop_reason = Some(StopReason::ToolUse);
                r.transcript_path = Some(PathBuf::from("t.jsonl"));
                r
            })),
        ),
        (
            "result_skipped",
            RunEvent::Result(Box::new(result(Outcome::new(
                OutcomeKind::Skipped,
                "`when` is false",
            )))),
        ),
    ]
}
