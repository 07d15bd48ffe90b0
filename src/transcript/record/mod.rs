//! Building transcript records (Claude Code's on-disk shape, reference §3) from run events.
//!
//! Common fields on every record: `parentUuid`, `isSidechain: false`, `userType: "external"`,
//! `entrypoint: "runner"`, `cwd`, `sessionId`, `version`, `gitBranch`, `type`, `uuid`,
//! `timestamp`. runner's own records are `system` records with `runner_*` subtypes; those that
//! are not part of the conversation (attempt abandoned, denial, result) have a null
//! `parentUuid` and point at the conversation's last record with `logicalParentUuid`, like
//! Claude Code's compact boundary.

use serde_json::{Map, Value, json};

use crate::events::{InitInfo, RunEvent};
use crate::report::json::result_value;

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
/// `entrypoint` of every record runner writes.
pub const ENTRYPOINT: &str = "runner";

/// Turns events into records; holds what every record repeats (from `Init`) and the last
/// conversation record's uuid.
pub struct RecordBuilder {
    session_id: String,
    cwd: String,
    version: String,
    git_branch: String,
    last_chain_uuid: Option<String>,
    resuming: bool,
    clock: Box<dyn FnMut() -> String + Send>,
    new_uuid: Box<dyn FnMut() -> String + Send>,
}

impl Default for RecordBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Now as RFC 3339 UTC with milliseconds (`2026-08-20T10:21:54.344Z`).
pub fn now_timestamp() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

impl RecordBuilder {
    /// A builder using the system clock and random uuids.
    pub fn new() -> Self {
        RecordBuilder {
            session_id: String::new(),
            cwd: String::new(),
            version: crate::VERSION.to_string(),
            git_branch: String::new(),
            last_chain_uuid: None,
            resuming: false,
            clock: Box::new(now_timestamp),
            new_uuid: Box::new(|| uuid::Uuid::new_v4().to_string()),
        }
    }

    /// Replace the timestamp source (tests).
    pub fn with_clock(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.clock = Box::new(f);
        self
    }

    /// Replace the uuid source for records the events carry no uuid for (init, denial,
    /// result) (tests).
    pub fn with_uuid_source(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.new_uuid = Box::new(f);
        self
    }

    /// A builder for a resumed run appending to an existing transcript: the `Init` event
    /// becomes a `runner_resume` record (the file already starts with its `runner_init`), and
    /// off-chain records point at `last_chain_uuid` until the conversation moves on.
    pub fn resuming(mut self, last_chain_uuid: Option<String>) -> Self {
        self.resuming = true;
        self.last_chain_uuid = last_chain_uuid;
        self
    }

    /// The records for `event` (none, one, or one per assistant block), not redacted.
    pub fn records(&mut self, event: &RunEvent) -> Vec<Value> {
        match event {
            RunEvent::Init(info) => {
                self.session_id = info.session_id.clone();
                self.cwd = info.cwd.display().to_string();
                self.version = info.version.clone();
                self.git_branch = info.git_branch.clone().unwrap_or_default();
                let uuid = if info.uuid.is_empty() {
                    (self.new_uuid)()
                } else {
                    info.uuid.clone()
                };
                let mut extra = init_fields(info);
                let (subtype, verb) = if self.resuming {
                    extra.extend(self.off_chain());
                    (SUBTYPE_RESUME, "resumed")
                } else {
                    (SUBTYPE_INIT, "started")
                };
                extra.insert(
                    "content".into(),
                    format!("runner {} {verb} task {}", info.version, info.task_name).into(),
                );
                extra.insert("level".into(), "info".into());
                vec![self.record("system", Some(subtype), None, None, &uuid, extra)]
            }
            RunEvent::UserText {
                uuid,
                parent_uuid,
                text,
            } => {
                let mut extra = Map::new();
                extra.insert("promptSource".into(), "sdk".into());
                let message = json!({"role": "user", "content": text});
                self.last_chain_uuid = Some(uuid.clone());
                vec![self.record(
                    "user",
                    None,
                    parent_uuid.as_deref(),
                    Some(message),
                    uuid,
                    extra,
                )]
            }
            RunEvent::AssistantBlockStreamed { .. } => Vec::new(),
            RunEvent::AssistantResponse { meta, blocks } => {
                let usage = serde_json::to_value(meta.usage).unwrap_or(Value::Null);
                let stop_reason = meta
                    .stop_reason
                    .as_ref()
                    .map_or(Value::Null, |s| s.as_str().into());
                let mut out = Vec::with_capacity(blocks.len());
                for b in blocks {
                    let message = json!({
                        "model": meta.model,
                        "id": meta.message_id,
                        "type": "message",
                        "role": "assistant",
                        "content": [b.block.to_value()],
                        "stop_reason": stop_reason,
                        "stop_sequence": meta.stop_sequence,
                        "usage": usage,
                    });
                    let mut extra = Map::new();
                    extra.insert(
                        "requestId".into(),
                        meta.request_id.clone().map_or(Value::Null, Value::String),
                    );
                    out.push(self.record(
                        "assistant",
                        None,
                        b.parent_uuid.as_deref(),
                        Some(message),
                        &b.uuid,
                        extra,
                    ));
                    self.last_chain_uuid = Some(b.uuid.clone());
                }
                out
            }
            RunEvent::ToolResult {
                uuid,
                parent_uuid,
                source_assistant_uuid,
                block,
                tool_use_result,
            } => {
                let message = json!({"role": "user", "content": [block.to_value()]});
                let mut extra = Map::new();
                if let Some(r) = tool_use_result {
                    extra.insert("toolUseResult".into(), r.clone());
                }
                extra.insert(
                    "sourceToolAssistantUUID".into(),
                    source_assistant_uuid.clone().into(),
                );
                self.last_chain_uuid = Some(uuid.clone());
                vec![self.record(
                    "user",
                    None,
                    parent_uuid.as_deref(),
                    Some(message),
                    uuid,
                    extra,
                )]
            }
            RunEvent::PermissionDenied(d) => {
                let mut extra = self.off_chain();
                extra.insert(
                    "content".into(),
                    format!("Permission to use {} was denied: {}", d.tool_name, d.reason).into(),
                );
                extra.insert("level".into(), "warning".into());
                extra.insert("toolName".into(), d.tool_name.clone().into());
                extra.insert("toolUseId".into(), d.tool_use_id.clone().into());
                extra.insert("toolInput".into(), d.tool_input.clone());
                extra.insert("reason".into(), d.reason.clone().into());
                let uuid = if d.uuid.is_empty() {
                    (self.new_uuid)()
                } else {
                    d.uuid.clone()
                };
                vec![self.record(
                    "system",
                    Some(SUBTYPE_PERMISSION_DENIED),
                    None,
                    None,
                    &uuid,
                    extra,
                )]
            }
            RunEvent::AttemptAbandoned {
                uuid,
                attempt,
                error,
                streamed_uuids,
            } => {
                let mut extra = self.off_chain();
                extra.insert(
                    "content".into(),
                    format!("response attempt {attempt} abandoned: {error}").into(),
                );
                extra.insert("level".into(), "warning".into());
                extra.insert("attempt".into(), (*attempt).into());
                extra.insert("error".into(), error.clone().into());
                extra.insert("streamedUuids".into(), streamed_uuids.clone().into());
                vec![self.record(
                    "system",
                    Some(SUBTYPE_ATTEMPT_ABANDONED),
                    None,
                    None,
                    uuid,
                    extra,
                )]
            }
            RunEvent::Checks { attempt, results } => {
                let mut extra = self.off_chain();
                let failed = results.iter().filter(|c| !c.passed).count();
                extra.insert(
                    "content".into(),
                    format!(
                        "verify checks for attempt {attempt}: {} passed, {failed} failed",
                        results.len() - failed
                    )
                    .into(),
                );
                extra.insert(
                    "level".into(),
                    if failed > 0 { "warning" } else { "info" }.into(),
                );
                extra.insert("attempt".into(), (*attempt).into());
                extra.insert(
                    "checks".into(),
                    serde_json::to_value(results).unwrap_or(Value::Null),
                );
                let uuid = (self.new_uuid)();
                vec![self.record("system", Some(SUBTYPE_CHECKS), None, None, &uuid, extra)]
            }
            RunEvent::Worktree {
                path,
                repo_root,
                base_commit,
            } => {
                let mut extra = self.off_chain();
                extra.insert(
                    "content".into(),
                    format!(
                        "task runs in git worktree {} (base commit {base_commit})",
                        path.display()
                    )
                    .into(),
                );
                extra.insert("level".into(), "info".into());
                extra.insert("worktree".into(), path.display().to_string().into());
                extra.insert("repoRoot".into(), repo_root.display().to_string().into());
                extra.insert("baseCommit".into(), base_commit.clone().into());
                let uuid = (self.new_uuid)();
                vec![self.record("system", Some(SUBTYPE_WORKTREE), None, None, &uuid, extra)]
            }
            RunEvent::ApiRetry {
                uuid,
                attempt,
                max_retries,
                retry_delay_ms,
                error_status,
                error,
                message,
            } => {
                let mut extra = self.off_chain();
                extra.insert(
                    "content".into(),
                    format!(
                        "API request failed ({message}); retry {attempt}/{max_retries} in {retry_delay_ms} ms"
                    )
                    .into(),
                );
                extra.insert("level".into(), "warning".into());
                extra.insert("attempt".into(), (*attempt).into());
                extra.insert("maxRetries".into(), (*max_retries).into());
                extra.insert("retryDelayMs".into(), (*retry_delay_ms).into());
                extra.insert(
                    "errorStatus".into(),
                    error_status.map_or(Value::Null, Into::into),
                );
                extra.insert("error".into(), error.clone().into());
                extra.insert("errorMessage".into(), message.clone().into());
                vec![self.record("system", Some(SUBTYPE_API_RETRY), None, None, uuid, extra)]
            }
            RunEvent::CompactBoundary {
                uuid,
                logical_parent_uuid,
                trigger,
                pre_tokens,
            } => {
                let mut extra = Map::new();
                extra.insert("content".into(), "Conversation compacted".into());
                extra.insert("level".into(), "info".into());
                extra.insert(
                    "logicalParentUuid".into(),
                    logical_parent_uuid
                        .clone()
                        .map_or(Value::Null, Value::String),
                );
                extra.insert(
                    "compactMetadata".into(),
                    json!({"trigger": trigger, "preTokens": pre_tokens}),
                );
                self.last_chain_uuid = Some(uuid.clone());
                vec![self.record(
                    "system",
                    Some(SUBTYPE_COMPACT_BOUNDARY),
                    None,
                    None,
                    uuid,
                    extra,
                )]
            }
            RunEvent::CompactSummary {
                uuid,
                parent_uuid,
                text,
            } => {
                let mut extra = Map::new();
                extra.insert("isCompactSummary".into(), true.into());
                let message = json!({"role": "user", "content": text});
                self.last_chain_uuid = Some(uuid.clone());
                vec![self.record("user", None, Some(parent_uuid), Some(message), uuid, extra)]
            }
            RunEvent::Result(r) => {
                let mut extra = self.off_chain();
                extra.insert(
                    "content".into(),
                    format!("task {} ended: {}", r.task_name, r.outcome.name()).into(),
                );
                extra.insert(
                    "level".into(),
                    if r.outcome.is_error() {
                        "error"
                    } else {
                        "info"
                    }
                    .into(),
                );
                extra.insert("result".into(), result_value(r));
                vec![self.record("system", Some(SUBTYPE_RESULT), None, None, &r.uuid, extra)]
            }
        }
    }

    fn off_chain(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            "logicalParentUuid".into(),
            self.last_chain_uuid
                .clone()
                .map_or(Value::Null, Value::String),
        );
        m
    }

    fn record(
        &mut self,
        ty: &str,
        subtype: Option<&str>,
        parent: Option<&str>,
        message: Option<Value>,
        uuid: &str,
        extra: Map<String, Value>,
    ) -> Value {
        let mut m = Map::new();
        m.insert("parentUuid".into(), parent.map_or(Value::Null, Into::into));
        m.insert("isSidechain".into(), false.into());
        m.insert("userType".into(), "external".into());
        m.insert("entrypoint".into(), ENTRYPOINT.into());
        m.insert("cwd".into(), self.cwd.clone().into());
        m.insert("sessionId".into(), self.session_id.clone().into());
        m.insert("version".into(), self.version.clone().into());
        m.insert("gitBranch".into(), self.git_branch.clone().into());
        m.insert("type".into(), ty.into());
        if let Some(s) = subtype {
            m.insert("subtype".into(), s.into());
        }
        if let Some(msg) = message {
            m.insert("message".into(), msg);
        }
        m.extend(extra);
        m.insert("uuid".into(), uuid.into());
        m.insert("timestamp".into(), (self.clock)().into());
        Value::Object(m)
    }
}

/// The `runner_init` fields that, with the common fields, rebuild the [`InitInfo`].
fn init_fields(info: &InitInfo) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskName".into(), info.task_name.clone().into());
    m.insert(
        "specPath".into(),
        info.spec_path.display().to_string().into(),
    );
    m.insert("spec".into(), info.spec.clone());
    m.insert("specDigest".into(), info.spec_digest.clone().into());
    m.insert("model".into(), info.model.clone().into());
    m.insert("provider".into(), info.provider.clone().into());
    m.insert("permissionMode".into(), info.permission_mode.clone().into());
    m.insert(
        "gitBaseCommit".into(),
        info.git_base_commit
            .clone()
            .map_or(Value::Null, Value::String),
    );
    m.insert("systemPrompt".into(), info.system_prompt.clone().into());
    m.insert(
        "tools".into(),
        serde_json::to_value(&info.tools).unwrap_or(Value::Array(Vec::new())),
    );
    m
}

#[cfg(test)]
mod tests;
