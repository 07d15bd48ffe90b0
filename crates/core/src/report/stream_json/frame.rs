//! stream-json frames: Claude Code's headless NDJSON messages (the Agent SDK's `SDKMessage`
//! union), as typed values, plus runner's `runner_*` additions that consumers ignore.

use std::borrow::Cow;

use schemars::JsonSchema;
use schemars::{Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::contract::lossy::DisplayPath;
use crate::contract::message::{ApiUsage, AssistantMessage, UserMessage};
use crate::contract::result::ResultMessage;
use crate::contract::system::{
    ChecksFields, InstructionsFields, IntegrityFields, ModelFallbackFields, NetworkFields,
    TimingFields, denial_message,
};
use crate::events::{Denial, InitInfo, McpServerStatus};
use crate::model::ToolSpec;
use crate::sandbox::SandboxReport;

/// One stream-json line, tagged by `type`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Frame<'a> {
    /// The run's start and what happened besides the conversation, by `subtype`.
    System(SystemFrame<'a>),
    /// The user side of the conversation (the prompt is not echoed).
    User(UserFrame<'a>),
    /// One content block of a response, as soon as it completes.
    Assistant(AssistantFrame<'a>),
    /// The last frame: how the task ended (the message carries its own `type`).
    #[serde(untagged)]
    Result(Box<ResultMessage<'a>>),
}

/// A `system` frame's `subtype` and its fields.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SystemFrame<'a> {
    /// The first frame (the SDK's `SDKSystemMessage`).
    Init(InitFrame<'a>),
    /// The permission policy denied a tool call.
    PermissionDenied(Stamped<'a, DenialFrame<'a>>),
    /// A response attempt failed mid-stream; the next assistant frame lists its frames in
    /// `supersedes`.
    RunnerAttemptAbandoned(Stamped<'a, AbandonedFrame<'a>>),
    /// A failed model request is about to be retried (the SDK's `SDKAPIRetryMessage`).
    ApiRetry(Stamped<'a, ApiRetryFrame<'a>>),
    /// Verify checks finished for one attempt.
    RunnerChecks(Stamped<'a, ChecksFields<'a>>),
    /// A command tried to reach a host through the sandbox's egress proxy.
    RunnerNetwork(Stamped<'a, NetworkFields<'a>>),
    /// A command changed a file that steers git and CI; runner undid it.
    RunnerIntegrity(Stamped<'a, IntegrityFields<'a>>),
    /// The project instruction files the first prompt carried.
    RunnerInstructions(Stamped<'a, InstructionsFields<'a>>),
    /// The task went on with its fallback model.
    RunnerModelFallback(Stamped<'a, ModelFallbackFields<'a>>),
    /// Where one turn's wall time went.
    RunnerTiming(Stamped<'a, TimingFields<'a>>),
    /// The conversation was compacted (the SDK's `SDKCompactBoundaryMessage`).
    CompactBoundary(Stamped<'a, CompactBoundaryFrame>),
}

/// A `system` frame after `init`: the subtype's fields `F`, then `uuid` and `session_id`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Stamped<'a, F> {
    /// The subtype's fields.
    #[serde(flatten)]
    pub fields: F,
    /// The frame's uuid (the transcript record's, when the event carries one).
    pub uuid: Cow<'a, str>,
    /// Session id of the task run.
    pub session_id: &'a str,
}

/// `system/init`, with the SDK's required fields (`runner_version` stands in for
/// `claude_code_version`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InitFrame<'a> {
    /// The task's working directory.
    pub cwd: DisplayPath<'a>,
    /// Session id of the task run.
    pub session_id: &'a str,
    /// The names of the tools offered.
    pub tools: ToolNames<'a>,
    /// The task's MCP servers: `name` and `status` (`connected` or `failed`).
    pub mcp_servers: McpServers<'a>,
    /// Model id.
    pub model: &'a str,
    /// Permission mode name.
    #[serde(rename = "permissionMode")]
    pub permission_mode: &'a str,
    /// Always empty.
    pub slash_commands: EmptyArray,
    /// `ANTHROPIC_API_KEY` for the Anthropic provider, `none` otherwise.
    #[serde(rename = "apiKeySource")]
    pub api_key_source: &'static str,
    /// runner's version.
    pub runner_version: &'a str,
    /// The version of runner's event schemas this stream follows (semver; `schema/` in the
    /// repository and each release publishes them).
    pub schema_version: &'static str,
    /// Always `default`.
    pub output_style: &'static str,
    /// Always empty.
    pub skills: EmptyArray,
    /// Always empty.
    pub plugins: EmptyArray,
    /// The frame's uuid (the transcript's `runner_init` record's).
    pub uuid: Cow<'a, str>,
    /// Task name.
    pub runner_task: &'a str,
    /// Provider name.
    pub runner_provider: &'a str,
    /// How the task's commands are confined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_sandbox: Option<&'a SandboxReport>,
}

impl<'a> InitFrame<'a> {
    /// The `system/init` frame of `info`, with `uuid`.
    pub fn new(info: &'a InitInfo, uuid: Cow<'a, str>) -> Self {
        InitFrame {
            cwd: DisplayPath(&info.cwd),
            session_id: &info.session_id,
            tools: ToolNames(&info.tools),
            mcp_servers: McpServers(&info.mcp_servers),
            model: &info.model,
            permission_mode: &info.permission_mode,
            slash_commands: EmptyArray,
            api_key_source: if info.provider == "anthropic" {
                "ANTHROPIC_API_KEY"
            } else {
                "none"
            },
            runner_version: &info.version,
            schema_version: crate::contract::SCHEMA_VERSION,
            output_style: "default",
            skills: EmptyArray,
            plugins: EmptyArray,
            uuid,
            runner_task: &info.task_name,
            runner_provider: &info.provider,
            runner_sandbox: info.sandbox.as_ref(),
        }
    }
}

/// Always `[]`: a list runner has nothing for.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyArray;

impl Serialize for EmptyArray {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(std::iter::empty::<()>())
    }
}

impl JsonSchema for EmptyArray {
    fn schema_name() -> Cow<'static, str> {
        "EmptyArray".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "maxItems": 0})
    }
}

/// The MCP servers as the SDK's `mcp_servers` lists them: `{name, status}` objects.
#[derive(Debug, Clone, Copy)]
pub struct McpServers<'a>(pub &'a [McpServerStatus]);

impl Serialize for McpServers<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Entry<'b> {
            name: &'b str,
            status: &'b str,
        }
        s.collect_seq(self.0.iter().map(|m| Entry {
            name: &m.name,
            status: &m.status,
        }))
    }
}

impl JsonSchema for McpServers<'_> {
    fn schema_name() -> Cow<'static, str> {
        "McpServers".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "status": {"enum": [McpServerStatus::CONNECTED, McpServerStatus::FAILED]}
                },
                "required": ["name", "status"],
                "additionalProperties": false
            }
        })
    }
}

/// The tools' names, as an array of strings.
#[derive(Debug, Clone, Copy)]
pub struct ToolNames<'a>(pub &'a [ToolSpec]);

impl Serialize for ToolNames<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|t| &t.name))
    }
}

/// `system/permission_denied`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DenialFrame<'a> {
    /// Tool name.
    pub tool_name: &'a str,
    /// The tool_use id.
    pub tool_use_id: &'a str,
    /// Always `rule`: runner's policy decides by rules.
    pub decision_reason_type: &'static str,
    /// Why the policy denied it.
    pub decision_reason: &'a str,
    /// What happened, in a line.
    pub message: String,
    /// The input the model gave.
    pub runner_tool_input: &'a Value,
}

impl<'a> From<&'a Denial> for DenialFrame<'a> {
    fn from(d: &'a Denial) -> Self {
        DenialFrame {
            tool_name: &d.tool_name,
            tool_use_id: &d.tool_use_id,
            decision_reason_type: "rule",
            decision_reason: &d.reason,
            message: denial_message(d),
            runner_tool_input: &d.tool_input,
        }
    }
}

/// `system/runner_attempt_abandoned`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AbandonedFrame<'a> {
    /// Attempt number (1-based).
    pub attempt: u32,
    /// Why it was abandoned.
    pub error: &'a str,
    /// uuids of the assistant frames already streamed for it.
    pub streamed_uuids: &'a [String],
}

/// `system/api_retry`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApiRetryFrame<'a> {
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
    pub runner_error_message: &'a str,
}

/// `system/compact_boundary`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompactBoundaryFrame {
    /// How the compaction came about.
    pub compact_metadata: CompactMetadataFrame,
}

/// A compact boundary's `compact_metadata`.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompactMetadataFrame {
    /// `auto` (runner compacts only by itself).
    pub trigger: &'static str,
    /// Estimated tokens of the conversation before compacting.
    pub pre_tokens: u64,
}

/// A `user` frame (the SDK's `SDKUserMessage`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum UserFrame<'a> {
    /// A text message after the prompt (feedback after failed checks).
    Text {
        /// The message (string content).
        message: UserMessage<'a>,
        /// Always null: runner runs no subagents.
        parent_tool_use_id: Option<&'a str>,
        /// Session id of the task run.
        session_id: &'a str,
        /// The frame's uuid (the transcript record's).
        uuid: &'a str,
    },
    /// One tool result.
    ToolResult {
        /// The message holding the `tool_result` block.
        message: UserMessage<'a>,
        /// Always null: runner runs no subagents.
        parent_tool_use_id: Option<&'a str>,
        /// Session id of the task run.
        session_id: &'a str,
        /// The frame's uuid (the transcript record's).
        uuid: &'a str,
        /// The tool's structured result (its shape is the tool's).
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_use_result: Option<&'a Value>,
    },
    /// The summary a compacted conversation restarts from.
    CompactSummary {
        /// The message (string content: the task prompt and the summary).
        message: UserMessage<'a>,
        /// Always null: runner runs no subagents.
        parent_tool_use_id: Option<&'a str>,
        /// Always true: runner wrote it, not the task.
        #[serde(rename = "isSynthetic")]
        is_synthetic: bool,
        /// Always true.
        runner_compact_summary: bool,
        /// Session id of the task run.
        session_id: &'a str,
        /// The frame's uuid (the transcript record's).
        uuid: &'a str,
    },
}

/// An `assistant` frame (the SDK's `SDKAssistantMessage`): one block, as it completes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AssistantFrame<'a> {
    /// The block as a message, with the usage so far and no stop reason.
    pub message: AssistantMessage<'a, ApiUsage>,
    /// Always null: runner runs no subagents.
    pub parent_tool_use_id: Option<&'a str>,
    /// Session id of the task run.
    pub session_id: &'a str,
    /// The frame's uuid (the transcript record's).
    pub uuid: &'a str,
    /// The provider's request id, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<&'a str>,
    /// The uuids of frames of abandoned attempts this response replaces (the first frame
    /// after an abandoned attempt only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
}

impl JsonSchema for ToolNames<'_> {
    fn schema_name() -> Cow<'static, str> {
        "ToolNames".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": {"type": "string"}})
    }
}
