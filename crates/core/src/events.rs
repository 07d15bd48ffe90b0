//! The event stream one task run emits. Reporters (transcript, stream-json, ...) are sinks of it.
//!
//! The agent loop assigns every uuid and parent link, so all sinks agree on them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::governor::RateLimitTally;
use crate::model::{ContentBlock, StopReason, ToolSpec, Usage};
use crate::outcome::Outcome;
use crate::sandbox::{NetworkAttempt, SandboxReport};

/// A fresh uuid (v4) for a record, a frame or a session: every sink gets the same one.
pub(crate) fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// What a run knows at its start (the transcript's first record, stream-json `system/init`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InitInfo {
    /// uuid of the init record/frame (the same in every sink).
    #[serde(default)]
    pub uuid: String,
    /// Session id (uuid v4) of this task run.
    pub session_id: String,
    /// Task name.
    pub task_name: String,
    /// Spec path as given on the command line.
    pub spec_path: PathBuf,
    /// The resolved spec (after CLI overrides), as JSON.
    pub spec: Value,
    /// sha256 of the resolved spec JSON, hex.
    pub spec_digest: String,
    /// The exact system prompt sent.
    pub system_prompt: String,
    /// The exact tool schemas sent.
    pub tools: Vec<ToolSpec>,
    /// Model id.
    pub model: String,
    /// Provider name.
    pub provider: String,
    /// Permission mode name.
    pub permission_mode: String,
    /// Effective workdir.
    pub cwd: PathBuf,
    /// Git branch of the workdir, if any.
    pub git_branch: Option<String>,
    /// Git HEAD commit at start, if any.
    pub git_base_commit: Option<String>,
    /// runner version.
    pub version: String,
    /// How the task's commands are confined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxReport>,
    /// The task's MCP servers and how each started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerStatus>,
}

/// How one MCP server started (the init record's `mcpServers`, stream-json init's
/// `mcp_servers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct McpServerStatus {
    /// The spec's name for it.
    pub name: String,
    /// [`McpServerStatus::CONNECTED`] or [`McpServerStatus::FAILED`].
    pub status: String,
    /// Why it did not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tools it offers, as the model sees them (`mcp__<server>__<tool>`).
    #[serde(default)]
    pub tools: Vec<String>,
}

impl McpServerStatus {
    /// `status` of a server that started and listed its tools.
    pub const CONNECTED: &'static str = "connected";
    /// `status` of a server that did not start.
    pub const FAILED: &'static str = "failed";
}

/// Message-level metadata of one assistant response.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AssistantMeta {
    /// API message id.
    pub message_id: String,
    /// Model that answered.
    pub model: String,
    /// Provider request id.
    pub request_id: Option<String>,
    /// Usage (final on `AssistantResponse`, partial on streamed blocks).
    pub usage: Usage,
    /// Stop reason (None while streaming).
    pub stop_reason: Option<StopReason>,
    /// Stop sequence.
    pub stop_sequence: Option<String>,
}

/// One assistant content block with its record identity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockRecord {
    /// Record uuid.
    pub uuid: String,
    /// Parent record uuid.
    pub parent_uuid: Option<String>,
    /// The block.
    pub block: ContentBlock,
}

/// A tool call that the permission policy denied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Denial {
    /// uuid of the denial record/frame (the same in every sink; empty when unknown).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uuid: String,
    /// Tool name.
    pub tool_name: String,
    /// tool_use id.
    pub tool_use_id: String,
    /// The input the model gave.
    pub tool_input: Value,
    /// Why it was denied.
    pub reason: String,
    /// It refused a file write (the `write` of the policy's [`crate::permissions::Decision::Deny`]);
    /// runner's own bookkeeping, not part of any output format.
    #[serde(skip)]
    pub write: bool,
}

/// Per-model usage and cost (stream-json `modelUsage`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// Summed usage.
    pub usage: Usage,
    /// Cost in USD, None when the model has no price.
    pub cost_usd: Option<f64>,
    /// Context window.
    pub context_window: Option<u64>,
    /// Output cap.
    pub max_output_tokens: Option<u32>,
}

/// The result of one verify check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CheckResult {
    /// Check name (the spec's `name`, or its command).
    pub name: String,
    /// The command run.
    pub command: String,
    /// Exited 0 within its time limit.
    pub passed: bool,
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Killed at its time limit.
    pub timed_out: bool,
    /// Wall time.
    pub duration_ms: u64,
    /// stdout then stderr, capped (head and tail).
    pub output: String,
    /// Which agent attempt it checked (1-based).
    pub attempt: u32,
    /// Run only to report the state the work was left in (the agent hit a limit).
    pub report_only: bool,
}

/// The final summary of one task run: everything reports derive from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Session id.
    pub session_id: String,
    /// Task name.
    pub task_name: String,
    /// Spec path as given.
    pub spec_path: PathBuf,
    /// 1-based line of the spec's `name:` key (JUnit `line`, annotations).
    pub spec_line: usize,
    /// Model id.
    pub model: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Turns taken.
    pub num_turns: u32,
    /// Wall time of the task.
    pub duration_ms: u64,
    /// Time spent waiting on the model API.
    pub duration_api_ms: u64,
    /// Summed usage over all requests.
    pub usage: Usage,
    /// Usage per model.
    pub model_usage: BTreeMap<String, ModelUsage>,
    /// Total cost, None when unknown.
    pub total_cost_usd: Option<f64>,
    /// Denied tool calls.
    pub permission_denials: Vec<Denial>,
    /// Stop reason of the last response.
    pub stop_reason: Option<StopReason>,
    /// Final answer: all text blocks of the last assistant message.
    pub result_text: String,
    /// Error messages (for error outcomes).
    pub errors: Vec<String>,
    /// Transcript file, if one was written.
    pub transcript_path: Option<PathBuf>,
    /// Local start time, `YYYY-MM-DDTHH:MM:SS`.
    pub started_at: String,
    /// uuid of the result frame.
    pub uuid: String,
    /// Verify checks of the last attempt that ran them.
    #[serde(default)]
    pub checks: Vec<CheckResult>,
    /// The value of the model's valid `StructuredOutput` call (tasks with `output:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<Value>,
    /// What git made of the task (patch, changes, branch commit), when its workdir is in a
    /// git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<crate::git::GitSummary>,
    /// How the task's commands were confined (None: the task never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxReport>,
    /// Connection attempts through the sandbox's egress proxy.
    #[serde(default, skip_serializing_if = "NetworkTally::is_empty")]
    pub network: NetworkTally,
    /// The commands the task ran (Bash tool calls that started), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandRun>,
    /// Changes to the files that steer git and CI that runner undid (each also a
    /// `runner_integrity` record); any ends the task `denied`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<crate::integrity::IntegrityChange>,
    /// Where the turns' wall time went, summed over the task.
    #[serde(default, skip_serializing_if = "TimingTotals::is_empty")]
    pub timing: TimingTotals,
    /// What the batch's rate-limit governor did to the task (waits, 429s, its limit).
    #[serde(default, skip_serializing_if = "RateLimitTally::is_empty")]
    pub rate_limit: RateLimitTally,
    /// Reports of this task that could not be written (the transcript, `result.json`), each
    /// naming its file; any makes the process exit non-zero.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub report_errors: Vec<String>,
}

/// A command the task ran: a Bash tool call that was allowed and started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CommandRun {
    /// The command line.
    pub command: String,
    /// Its exit code (128 + signal when a signal ended it); null when it never exited (timed
    /// out, interrupted).
    pub exit_code: Option<i32>,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// It was killed at its time limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

/// Where one turn's wall time went, by phase, in milliseconds. The phases follow each other
/// and together make up the turn.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct Phases {
    /// Checks, context preparation (and compaction) and building the request.
    pub request_build_ms: u64,
    /// Failed attempts of the request and the waits before their retries.
    pub retry_ms: u64,
    /// From sending the request to the first byte of the response.
    pub ttfb_ms: u64,
    /// From the first byte to the end of the response.
    pub stream_ms: u64,
    /// Running the response's tool calls (their hooks excluded).
    pub tools_ms: u64,
    /// Running hooks (PreToolUse, PostToolUse, Stop).
    pub hooks_ms: u64,
}

impl Phases {
    /// Each phase with its name, in order.
    pub fn named(&self) -> [(&'static str, u64); 6] {
        [
            ("request_build", self.request_build_ms),
            ("retry", self.retry_ms),
            ("ttfb", self.ttfb_ms),
            ("stream", self.stream_ms),
            ("tools", self.tools_ms),
            ("hooks", self.hooks_ms),
        ]
    }

    /// The sum of the phases.
    pub fn total_ms(&self) -> u64 {
        self.named().iter().map(|(_, v)| v).sum()
    }

    /// Add `other` phase by phase.
    pub fn add(&mut self, other: &Phases) {
        self.request_build_ms = self.request_build_ms.saturating_add(other.request_build_ms);
        self.retry_ms = self.retry_ms.saturating_add(other.retry_ms);
        self.ttfb_ms = self.ttfb_ms.saturating_add(other.ttfb_ms);
        self.stream_ms = self.stream_ms.saturating_add(other.stream_ms);
        self.tools_ms = self.tools_ms.saturating_add(other.tools_ms);
        self.hooks_ms = self.hooks_ms.saturating_add(other.hooks_ms);
    }
}

/// The turns' timing summed over a task (the result's `runner_timing`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct TimingTotals {
    /// Turns timed.
    pub turns: u32,
    /// Their wall time.
    pub wall_ms: u64,
    /// Their phases.
    #[serde(flatten)]
    pub phases: Phases,
}

impl TimingTotals {
    /// Whether no turn was timed.
    pub fn is_empty(&self) -> bool {
        self.turns == 0
    }

    /// Count one turn.
    pub fn add(&mut self, wall_ms: u64, phases: &Phases) {
        self.turns = self.turns.saturating_add(1);
        self.wall_ms = self.wall_ms.saturating_add(wall_ms);
        self.phases.add(phases);
    }
}

/// A project instruction file the first prompt carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InstructionFile {
    /// Its path.
    pub path: PathBuf,
    /// SHA-256 of its content, hex.
    pub sha256: String,
    /// Its size.
    pub bytes: u64,
    /// Only its start was sent (the total size cap was reached).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// How many connection attempts the egress proxy let through and refused.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct NetworkTally {
    /// Attempts to allowed hosts.
    pub allowed: u32,
    /// Attempts refused (host not allowed, or malformed).
    pub denied: u32,
}

impl NetworkTally {
    /// Whether no attempt was made.
    pub fn is_empty(&self) -> bool {
        self.allowed == 0 && self.denied == 0
    }

    /// Count one attempt.
    pub fn add(&mut self, a: &NetworkAttempt) {
        if a.allowed {
            self.allowed = self.allowed.saturating_add(1);
        } else {
            self.denied = self.denied.saturating_add(1);
        }
    }
}

impl RunResult {
    /// A copy with every string redacted by `red` (for the text and JUnit reports, which
    /// render an already redacted result).
    pub fn redacted(&self, red: &crate::redact::Redactor) -> RunResult {
        if red.is_empty() {
            return self.clone();
        }
        let redacted = serde_json::to_value(self).and_then(|mut v| {
            red.redact_value(&mut v);
            serde_json::from_value::<RunResult>(v)
        });
        match redacted {
            Ok(r) => r,
            Err(e) => {
                // Cannot happen for a value serde just produced; fall back to field-wise
                // redaction of the free text rather than leaking.
                tracing::warn!(error = %e, "redacting a run result via JSON failed");
                let mut r = self.clone();
                r.result_text = red.redact(&r.result_text).into_owned();
                r.errors = r
                    .errors
                    .iter()
                    .map(|e| red.redact(e).into_owned())
                    .collect();
                r.outcome.message = red.redact(&r.outcome.message).into_owned();
                r
            }
        }
    }

    /// The result of a task that never ran (skipped, or cut short before it started), or the
    /// start of one whose session is being built.
    pub fn not_run(loaded: &crate::spec::LoadedSpec, outcome: Outcome) -> RunResult {
        RunResult {
            session_id: new_uuid(),
            task_name: loaded.spec.name.clone(),
            spec_path: loaded.path.clone(),
            spec_line: loaded.name_line,
            model: loaded.spec.model.clone(),
            errors: if outcome.is_error() {
                vec![outcome.message.clone()]
            } else {
                vec![]
            },
            outcome,
            num_turns: 0,
            duration_ms: 0,
            duration_api_ms: 0,
            usage: Default::default(),
            model_usage: Default::default(),
            total_cost_usd: None,
            permission_denials: vec![],
            stop_reason: None,
            result_text: String::new(),
            transcript_path: None,
            started_at: chrono::Local::now().format("%Y-%m-%dT%H:%M:%S").to_string(),
            uuid: new_uuid(),
            checks: vec![],
            structured_output: None,
            git: None,
            sandbox: None,
            network: NetworkTally::default(),
            commands: Vec::new(),
            integrity: Vec::new(),
            timing: TimingTotals::default(),
            rate_limit: RateLimitTally::default(),
            report_errors: vec![],
        }
    }
}

/// One event of a task run.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// The run started (first transcript record, `system/init`).
    Init(Box<InitInfo>),
    /// A user text message (the prompt, or later feedback).
    UserText {
        /// Record uuid.
        uuid: String,
        /// Parent record uuid.
        parent_uuid: Option<String>,
        /// The text.
        text: String,
    },
    /// A content block completed while streaming (stream-json shows it live).
    AssistantBlockStreamed {
        /// Record uuid (reused by `AssistantResponse`).
        uuid: String,
        /// Message metadata so far.
        meta: AssistantMeta,
        /// The block.
        block: ContentBlock,
    },
    /// A response attempt completed: its blocks with final usage (transcript records).
    AssistantResponse {
        /// Message metadata with final usage and stop reason.
        meta: AssistantMeta,
        /// Blocks in order.
        blocks: Vec<BlockRecord>,
    },
    /// One tool result (a user record with `toolUseResult`).
    ToolResult {
        /// Record uuid.
        uuid: String,
        /// Parent record uuid (the tool_use record).
        parent_uuid: Option<String>,
        /// uuid of the assistant record holding the tool_use.
        source_assistant_uuid: String,
        /// The tool_result block.
        block: ContentBlock,
        /// The tool's structured result.
        tool_use_result: Option<Value>,
    },
    /// A tool call was denied by the policy.
    PermissionDenied(Denial),
    /// A response attempt was abandoned (failed mid-stream); nothing of it is in the chain.
    AttemptAbandoned {
        /// Record uuid.
        uuid: String,
        /// Attempt number (1-based).
        attempt: u32,
        /// Why.
        error: String,
        /// uuids of the blocks already streamed for it.
        streamed_uuids: Vec<String>,
    },
    /// Verify checks finished for one attempt.
    Checks {
        /// Attempt number (1-based).
        attempt: u32,
        /// Their results.
        results: Vec<CheckResult>,
    },
    /// A failed model request is about to be retried (stream-json `system/api_retry`).
    ApiRetry {
        /// Record uuid.
        uuid: String,
        /// 1-based retry number.
        attempt: u32,
        /// The configured retry limit.
        max_retries: u32,
        /// How long runner waits before the retry.
        retry_delay_ms: u64,
        /// HTTP status of the failure, if it was an HTTP error.
        error_status: Option<u16>,
        /// The SDK's error category (`rate_limit`, `server_error`, ...).
        error: String,
        /// The failure in full.
        message: String,
    },
    /// The conversation was compacted (transcript `system/compact_boundary` record, stream-json
    /// `system/compact_boundary` frame). The chain restarts here: what follows does not link
    /// back to the records before it.
    CompactBoundary {
        /// Record uuid.
        uuid: String,
        /// The last record of the chain before the boundary (`logicalParentUuid`).
        logical_parent_uuid: Option<String>,
        /// `auto` (runner compacts only by itself).
        trigger: &'static str,
        /// Estimated tokens of the conversation before compacting.
        pre_tokens: u64,
    },
    /// The summary that replaces the conversation after a boundary (a user record with
    /// `isCompactSummary: true`).
    CompactSummary {
        /// Record uuid.
        uuid: String,
        /// The boundary's uuid.
        parent_uuid: String,
        /// The user message text (task prompt and summary).
        text: String,
    },
    /// The task runs in a git worktree of its own (transcript `system/runner_worktree`), so a
    /// resumed run can continue there if the task does not finish.
    Worktree {
        /// The worktree's path.
        path: PathBuf,
        /// The repository it belongs to.
        repo_root: PathBuf,
        /// The commit it was checked out from.
        base_commit: String,
    },
    /// A call that may change something is starting (transcript-only
    /// `system/runner_tool_started`): if the run dies before its result is recorded, a resume
    /// knows the call may have done its work, and which process group to stop.
    ToolStarted {
        /// Record uuid.
        uuid: String,
        /// The tool_use id.
        tool_use_id: String,
        /// Tool name.
        tool_name: String,
        /// The process group the call started, for a command.
        group: Option<crate::process::identity::GroupIdentity>,
    },
    /// A command tried to reach a host through the sandbox's egress proxy (transcript
    /// `system/runner_network`, stream-json `system/runner_network`).
    Network {
        /// Record uuid.
        uuid: String,
        /// The attempt.
        attempt: NetworkAttempt,
    },
    /// A command changed a file that steers git and CI, and runner undid it (transcript
    /// `system/runner_integrity`, stream-json `system/runner_integrity`).
    Integrity {
        /// Record uuid.
        uuid: String,
        /// The change.
        change: crate::integrity::IntegrityChange,
    },
    /// Project instruction files were read for the first prompt (transcript
    /// `system/runner_instructions`, stream-json `system/runner_instructions`).
    Instructions {
        /// Record uuid.
        uuid: String,
        /// The files, in the order the prompt carries them.
        files: Vec<InstructionFile>,
    },
    /// The main model stayed overloaded after its retries; the task goes on with the fallback
    /// model (transcript and stream-json `system/runner_model_fallback`).
    ModelFallback {
        /// Record uuid.
        uuid: String,
        /// The model given up on.
        from: String,
        /// The model used from now on.
        to: String,
        /// The last overload error.
        error: String,
    },
    /// One turn's timing (transcript and stream-json `system/runner_timing`).
    Timing {
        /// Record uuid.
        uuid: String,
        /// The turn (1-based).
        turn: u32,
        /// Its wall time.
        wall_ms: u64,
        /// Where that time went.
        phases: Phases,
    },
    /// The run ended.
    Result(Box<RunResult>),
}

/// A consumer of run events.
pub trait Sink: Send {
    /// Handle one event. Errors are reported but do not stop the run unless the sink is
    /// essential (the transcript).
    fn emit(&mut self, event: &RunEvent) -> std::io::Result<()>;
}

/// Several sinks fed in order. Clones share the sinks: the loop emits through one, and a
/// running tool call records that it started through another (see `tools::journal`).
#[derive(Clone, Default)]
pub(crate) struct Sinks {
    sinks: Arc<Mutex<Vec<Box<dyn Sink>>>>,
}

impl Sinks {
    /// Add a sink.
    pub(crate) fn push(&self, sink: Box<dyn Sink>) {
        self.lock().push(sink);
    }

    /// Feed an event to every sink; the first error is returned after all have seen it.
    pub(crate) fn emit(&self, event: &RunEvent) -> std::io::Result<()> {
        let mut first = None;
        for s in self.lock().iter_mut() {
            if let Err(e) = s.emit(event) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Sink>>> {
        // A sink that panicked mid-write leaves its own state; the others still get events.
        self.sinks.lock().unwrap_or_else(|e| e.into_inner())
    }
}
