//! The record shape: the `system` subtypes, a record's common head and its body by type.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::system::SystemRecord;
use crate::contract::message::{AssistantMessage, UserMessage};
use crate::model::Usage;

/// `system` subtype of the first record.
pub const SUBTYPE_INIT: &str = "runner_init";
/// `system` subtype of an abandoned response attempt.
pub const SUBTYPE_ATTEMPT_ABANDONED: &str = "runner_attempt_abandoned";
/// `system` subtype of a retried model request.
pub const SUBTYPE_API_RETRY: &str = "runner_api_retry";
/// `system` subtype of a denied tool call.
pub const SUBTYPE_PERMISSION_DENIED: &str = "runner_permission_denied";
/// `system` subtype of the last record.
pub const SUBTYPE_RESULT: &str = "runner_result";
/// Subtype of the record holding one attempt's verify check results.
pub const SUBTYPE_CHECKS: &str = "runner_checks";
/// `system` subtype of Claude Code's compact boundary: the conversation restarts from the
/// summary record after it.
pub const SUBTYPE_COMPACT_BOUNDARY: &str = "compact_boundary";
/// `system` subtype of the record a resumed run starts with (instead of a second
/// `runner_init`).
pub const SUBTYPE_RESUME: &str = "runner_resume";
/// `system` subtype of the record naming the git worktree a task runs in.
pub const SUBTYPE_WORKTREE: &str = "runner_worktree";
/// `system` subtype of a connection attempt through the sandbox's egress proxy.
pub const SUBTYPE_NETWORK: &str = "runner_network";
/// `system` subtype of a change to a file that steers git and CI, undone.
pub const SUBTYPE_INTEGRITY: &str = "runner_integrity";
/// `system` subtype of the record listing the project instruction files read.
pub const SUBTYPE_INSTRUCTIONS: &str = "runner_instructions";
/// `system` subtype of the switch to the fallback model.
pub const SUBTYPE_MODEL_FALLBACK: &str = "runner_model_fallback";
/// `system` subtype of one turn's timing.
pub const SUBTYPE_TIMING: &str = "runner_timing";
/// `system` subtype of a side-effecting tool call that started (its result follows unless the
/// run died first).
pub const SUBTYPE_TOOL_STARTED: &str = "runner_tool_started";
/// `entrypoint` of every record runner writes.
pub(crate) const ENTRYPOINT: &str = "runner";

/// One transcript line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Record<'a> {
    /// The fields every record starts with.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `type` and its fields.
    #[serde(flatten)]
    pub body: RecordBody<'a>,
    /// The record's uuid (other records link to it).
    pub uuid: Cow<'a, str>,
    /// When it was written: RFC 3339 UTC with milliseconds.
    pub timestamp: String,
}

/// The fields every record starts with.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Head<'a> {
    /// The record before this one in the conversation; null for the first record and for
    /// records outside the conversation.
    pub parent_uuid: Option<&'a str>,
    /// Always false: runner writes no subagent records.
    pub is_sidechain: bool,
    /// Always `external`.
    pub user_type: &'static str,
    /// Always [`ENTRYPOINT`].
    pub entrypoint: &'static str,
    /// The task's working directory.
    pub cwd: &'a str,
    /// Session id of the task run.
    pub session_id: &'a str,
    /// runner's version.
    pub version: &'a str,
    /// Git branch of the working directory; empty outside a repository.
    pub git_branch: &'a str,
}

/// A record's `type` and the fields of that type.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RecordBody<'a> {
    /// The user side of the conversation.
    User(UserRecord<'a>),
    /// One content block of a model response.
    Assistant(AssistantRecord<'a>),
    /// runner's own records and the compact boundary, by `subtype`.
    System(SystemRecord<'a>),
}

/// A `user` record.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum UserRecord<'a> {
    /// A text message: the prompt, or feedback after failed checks.
    Text {
        /// The message (string content).
        message: UserMessage<'a>,
        /// Always `sdk`: the text came from the task, not a person at a prompt.
        #[serde(rename = "promptSource")]
        prompt_source: &'static str,
    },
    /// One tool result.
    ToolResult {
        /// The message holding the `tool_result` block.
        message: UserMessage<'a>,
        /// The tool's structured result (its shape is the tool's).
        #[serde(rename = "toolUseResult", skip_serializing_if = "Option::is_none")]
        tool_use_result: Option<&'a Value>,
        /// The assistant record holding the `tool_use` this answers.
        #[serde(rename = "sourceToolAssistantUUID")]
        source_tool_assistant_uuid: &'a str,
    },
    /// The summary a compacted conversation restarts from (its parent is the boundary).
    CompactSummary {
        /// The message (string content: the task prompt and the summary).
        message: UserMessage<'a>,
        /// Always true.
        #[serde(rename = "isCompactSummary")]
        is_compact_summary: bool,
    },
}

/// An `assistant` record: one content block of a completed response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AssistantRecord<'a> {
    /// The block as a message, with the response's stop reason and final usage.
    pub message: AssistantMessage<'a, &'a Usage>,
    /// The provider's request id; null when it gave none.
    #[serde(rename = "requestId")]
    pub request_id: Option<&'a str>,
}
