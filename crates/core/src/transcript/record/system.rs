//! `system` records: runner's own (`runner_*` subtypes) and Claude Code's compact boundary.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::contract::lossy::DisplayPath;
use crate::contract::result::ResultMessage;
use crate::contract::system::{
    ChecksFields, InstructionsFields, IntegrityFields, ModelFallbackFields, NetworkFields,
    TimingFields,
};
use crate::events::{Denial, InitInfo, McpServerStatus};
use crate::model::ToolSpec;
use crate::process::identity::GroupIdentity;
use crate::sandbox::SandboxReport;

/// A `system` record's `subtype` and the fields of that subtype.
///
/// Each variant's subtype is its name in snake_case (the `SUBTYPE_*` constants of the parent
/// module). Every variant carries a human-readable `content` line and a [`Level`].
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SystemRecord<'a> {
    /// The first record of a run: everything needed to resume it.
    RunnerInit(InitRecord<'a>),
    /// The first record a resumed run appends (the file already starts with its
    /// `runner_init`).
    RunnerResume(ResumeRecord<'a>),
    /// The permission policy denied a tool call.
    RunnerPermissionDenied(OffChain<'a, DenialFields<'a>>),
    /// A response attempt failed mid-stream; the blocks already streamed for it are not part
    /// of the conversation.
    RunnerAttemptAbandoned(OffChain<'a, AbandonedFields<'a>>),
    /// A failed model request is about to be retried.
    RunnerApiRetry(OffChain<'a, ApiRetryFields<'a>>),
    /// Verify checks finished for one attempt.
    RunnerChecks(OffChain<'a, ChecksFields<'a>>),
    /// The task runs in a git worktree of its own.
    RunnerWorktree(OffChain<'a, WorktreeFields<'a>>),
    /// A command tried to reach a host through the sandbox's egress proxy.
    RunnerNetwork(OffChain<'a, NetworkFields<'a>>),
    /// A command changed a file that steers git and CI; runner undid it.
    RunnerIntegrity(OffChain<'a, IntegrityFields<'a>>),
    /// The project instruction files the first prompt carried, with their hashes.
    RunnerInstructions(OffChain<'a, InstructionsFields<'a>>),
    /// The task went on with its fallback model.
    RunnerModelFallback(OffChain<'a, ModelFallbackFields<'a>>),
    /// Where one turn's wall time went.
    RunnerTiming(OffChain<'a, TimingFields<'a>>),
    /// A call that may change something started.
    RunnerToolStarted(OffChain<'a, ToolStartedFields<'a>>),
    /// The conversation was compacted: it restarts from the summary record after this one.
    CompactBoundary(CompactBoundaryRecord<'a>),
    /// The last record: how the task ended.
    RunnerResult(OffChain<'a, ResultFields<'a>>),
}

/// How much a `system` record matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Progress.
    Info,
    /// Something went wrong, and the run went on.
    Warning,
    /// The task failed.
    Error,
}

/// A `system` record outside the conversation: `parentUuid` is null and `logicalParentUuid`
/// names the conversation's last record when it was written. `F` holds the subtype's fields,
/// written after `content` and `level`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OffChain<'a, F> {
    /// The conversation's last record; null before the conversation starts.
    #[serde(rename = "logicalParentUuid")]
    pub logical_parent_uuid: Option<&'a str>,
    /// What happened, in a line.
    pub content: String,
    /// How much it matters.
    pub level: Level,
    /// The subtype's fields.
    #[serde(flatten)]
    pub fields: F,
}

/// `runner_init`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InitRecord<'a> {
    /// What the run started with.
    #[serde(flatten)]
    pub init: InitFields<'a>,
    /// `runner VERSION started task NAME`.
    pub content: String,
    /// Always [`Level::Info`].
    pub level: Level,
}

/// `runner_resume`: the init fields again (the resumed run's), then where the conversation
/// stood.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResumeRecord<'a> {
    /// What the resumed run started with.
    #[serde(flatten)]
    pub init: InitFields<'a>,
    /// The conversation's last record in the file resumed.
    #[serde(rename = "logicalParentUuid")]
    pub logical_parent_uuid: Option<&'a str>,
    /// `runner VERSION resumed task NAME`.
    pub content: String,
    /// Always [`Level::Info`].
    pub level: Level,
}

/// The fields of `runner_init` and `runner_resume` that, with the common fields, rebuild the
/// run's [`InitInfo`].
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct InitFields<'a> {
    /// The version of runner's event schemas this transcript follows (semver; `schema/` in the
    /// repository and each release publishes them).
    #[serde(rename = "schema_version")]
    pub schema_version: &'static str,
    /// Task name.
    pub task_name: &'a str,
    /// Spec path as given on the command line.
    pub spec_path: DisplayPath<'a>,
    /// The resolved spec (after command-line overrides).
    pub spec: &'a Value,
    /// sha256 of the resolved spec's JSON, hex.
    pub spec_digest: &'a str,
    /// Model id.
    pub model: &'a str,
    /// Provider name.
    pub provider: &'a str,
    /// Permission mode name.
    pub permission_mode: &'a str,
    /// Git HEAD commit at the start; null outside a repository.
    pub git_base_commit: Option<&'a str>,
    /// The exact system prompt sent.
    pub system_prompt: &'a str,
    /// The exact tool schemas sent.
    pub tools: &'a [ToolSpec],
    /// How the task's commands are confined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<&'a SandboxReport>,
    /// The task's MCP servers and how each started.
    #[serde(skip_serializing_if = "<[McpServerStatus]>::is_empty")]
    pub mcp_servers: &'a [McpServerStatus],
}

impl<'a> From<&'a InitInfo> for InitFields<'a> {
    fn from(info: &'a InitInfo) -> Self {
        InitFields {
            schema_version: crate::contract::SCHEMA_VERSION,
            task_name: &info.task_name,
            spec_path: DisplayPath(&info.spec_path),
            spec: &info.spec,
            spec_digest: &info.spec_digest,
            model: &info.model,
            provider: &info.provider,
            permission_mode: &info.permission_mode,
            git_base_commit: info.git_base_commit.as_deref(),
            system_prompt: &info.system_prompt,
            tools: &info.tools,
            sandbox: info.sandbox.as_ref(),
            mcp_servers: &info.mcp_servers,
        }
    }
}

/// `runner_permission_denied`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DenialFields<'a> {
    /// Tool name.
    pub tool_name: &'a str,
    /// The tool_use id.
    pub tool_use_id: &'a str,
    /// The input the model gave.
    pub tool_input: &'a Value,
    /// Why the policy denied it.
    pub reason: &'a str,
}

impl<'a> From<&'a Denial> for DenialFields<'a> {
    fn from(d: &'a Denial) -> Self {
        DenialFields {
            tool_name: &d.tool_name,
            tool_use_id: &d.tool_use_id,
            tool_input: &d.tool_input,
            reason: &d.reason,
        }
    }
}

/// `runner_attempt_abandoned`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct AbandonedFields<'a> {
    /// Attempt number (1-based).
    pub attempt: u32,
    /// Why it was abandoned.
    pub error: &'a str,
    /// uuids of the blocks already streamed for it (resume leaves them out).
    pub streamed_uuids: &'a [String],
}

/// `runner_api_retry`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ApiRetryFields<'a> {
    /// 1-based retry number.
    pub attempt: u32,
    /// The configured retry limit.
    pub max_retries: u32,
    /// How long runner waits before the retry.
    pub retry_delay_ms: u64,
    /// HTTP status of the failure; null when it was not an HTTP error.
    pub error_status: Option<u16>,
    /// The SDK's error category (`rate_limit`, `server_error`, ...).
    pub error: &'a str,
    /// The failure in full.
    pub error_message: &'a str,
}

/// `runner_worktree`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct WorktreeFields<'a> {
    /// The worktree's path.
    pub worktree: DisplayPath<'a>,
    /// The repository it belongs to.
    pub repo_root: DisplayPath<'a>,
    /// The commit it was checked out from.
    pub base_commit: &'a str,
}

/// `runner_tool_started`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ToolStartedFields<'a> {
    /// Tool name.
    pub tool_name: &'a str,
    /// The tool_use id.
    pub tool_use_id: &'a str,
    /// The process group a command started (absent for other calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_group: Option<&'a GroupIdentity>,
}

/// `runner_result`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResultFields<'a> {
    /// The result message, as the `json` output format prints it (boxed: it is by far the
    /// largest record).
    pub result: Box<ResultMessage<'a>>,
}

/// `compact_boundary` (Claude Code's): in the chain (`parentUuid` null, as a new root), with
/// the last record before it in `logicalParentUuid`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompactBoundaryRecord<'a> {
    /// Always `Conversation compacted`.
    pub content: &'static str,
    /// Always [`Level::Info`].
    pub level: Level,
    /// The last record of the conversation before the boundary.
    #[serde(rename = "logicalParentUuid")]
    pub logical_parent_uuid: Option<&'a str>,
    /// How the compaction came about.
    #[serde(rename = "compactMetadata")]
    pub compact_metadata: CompactMetadata,
}

/// A compact boundary's `compactMetadata`.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct CompactMetadata {
    /// `auto` (runner compacts only by itself).
    pub trigger: &'static str,
    /// Estimated tokens of the conversation before compacting.
    pub pre_tokens: u64,
}
