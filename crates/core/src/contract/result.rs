//! The result message: the Agent SDK's `SDKResultSuccess | SDKResultError` plus runner's
//! `runner_*` fields. It is the `json` output format's line, stream-json's last frame and the
//! `result` of the transcript's `runner_result` record.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use schemars::{Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::contract::lossy::{DisplayPath, or_null};
use crate::contract::message::ApiUsage;
use crate::events::{
    CheckResult, CommandRun, Denial, ModelUsage, NetworkTally, RunResult, TimingTotals,
};
use crate::git::GitSummary;
use crate::governor::RateLimitTally;
use crate::integrity::IntegrityChange;
use crate::sandbox::SandboxReport;

/// The result message of one finished task (`"type":"result"`).
///
/// `result` on success, `errors` otherwise; `total_cost_usd` and `costUSD` are null when the
/// cost is unknown (never 0).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "result")]
#[schemars(
    rename = "ResultMessage",
    deny_unknown_fields,
    transform = result_type_tag
)]
pub struct ResultMessage<'a> {
    /// The SDK's subtype: `success`, `error_max_turns`, `error_during_execution`, ...
    pub subtype: &'a str,
    /// Whether the task failed in any way.
    pub is_error: bool,
    /// Wall time of the task.
    pub duration_ms: u64,
    /// Time spent waiting on the model API.
    pub duration_api_ms: u64,
    /// Turns taken.
    pub num_turns: u32,
    /// Why it failed (error outcomes only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<&'a [String]>,
    /// The final answer (success only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a str>,
    /// The value of the model's valid `StructuredOutput` call (tasks with `output:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<&'a Value>,
    /// Stop reason of the last response.
    pub stop_reason: Option<&'a str>,
    /// Session id of the task run.
    pub session_id: &'a str,
    /// Total cost in USD; null when unknown.
    pub total_cost_usd: Option<f64>,
    /// Usage summed over all requests.
    pub usage: ApiUsage,
    /// Usage and cost per model, by model id.
    #[serde(rename = "modelUsage")]
    pub model_usage: ModelUsages<'a>,
    /// The denied tool calls.
    pub permission_denials: PermissionDenials<'a>,
    /// The SDK's terminal reason (`completed`, `max_turns`, ...).
    pub terminal_reason: &'a str,
    /// uuid of the result (the same in every output).
    pub uuid: &'a str,
    /// runner's outcome name (`success`, `checks_failed`, ...).
    pub runner_outcome: &'static str,
    /// Task name.
    pub runner_task: &'a str,
    /// The transcript written, if any.
    pub runner_transcript_path: Option<DisplayPath<'a>>,
    /// The exit code this outcome alone gives.
    pub runner_exit_code: i32,
    /// Why the task was skipped (skipped tasks only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_skip_reason: Option<&'a str>,
    /// Verify checks of the last attempt that ran them (left out when none ran).
    #[serde(skip_serializing_if = "<[CheckResult]>::is_empty")]
    pub runner_checks: &'a [CheckResult],
    /// What git made of the task, when its workdir is in a git repository (null if it cannot be
    /// written, e.g. a path that is not UTF-8).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "or_null")]
    #[schemars(with = "Option<GitSummary>")]
    pub runner_git: Option<&'a GitSummary>,
    /// How the task's commands were confined (absent for a task that never started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_sandbox: Option<&'a SandboxReport>,
    /// Connection attempts through the sandbox's egress proxy (absent when there were none).
    #[serde(skip_serializing_if = "NetworkTally::is_empty")]
    pub runner_network: NetworkTally,
    /// The commands the task ran, with exit codes and durations (absent when none ran); the
    /// files it changed are in `runner_git.files`, the calls denied in `permission_denials`.
    #[serde(skip_serializing_if = "<[CommandRun]>::is_empty")]
    pub runner_commands: &'a [CommandRun],
    /// Changes to the files that steer git and CI that runner undid, each ending the task
    /// `denied` (absent when there were none).
    #[serde(skip_serializing_if = "<[IntegrityChange]>::is_empty")]
    pub runner_integrity: &'a [IntegrityChange],
    /// Where the turns' wall time went, summed (absent when no turn was taken).
    #[serde(skip_serializing_if = "TimingTotals::is_empty")]
    pub runner_timing: TimingTotals,
    /// What the batch's rate-limit governor did to the task (absent when it neither waited
    /// nor met a 429 or 529).
    #[serde(skip_serializing_if = "RateLimitTally::is_empty")]
    pub runner_rate_limit: RateLimitTally,
    /// Reports of the task that could not be written, each naming its file (absent when all
    /// were).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub runner_report_errors: &'a [String],
}

impl<'a> ResultMessage<'a> {
    /// The result message of `r`.
    pub fn new(r: &'a RunResult) -> Self {
        let is_error = r.outcome.is_error();
        ResultMessage {
            subtype: r.outcome.subtype(),
            is_error,
            duration_ms: r.duration_ms,
            duration_api_ms: r.duration_api_ms,
            num_turns: r.num_turns,
            errors: is_error.then(|| error_texts(r)),
            result: (!is_error).then_some(r.result_text.as_str()),
            structured_output: r.structured_output.as_ref(),
            stop_reason: r.stop_reason.as_ref().map(|s| s.as_str()),
            session_id: &r.session_id,
            total_cost_usd: r.total_cost_usd,
            usage: ApiUsage::from(&r.usage),
            model_usage: ModelUsages(&r.model_usage),
            permission_denials: PermissionDenials(&r.permission_denials),
            terminal_reason: r.outcome.terminal_reason(),
            uuid: &r.uuid,
            runner_outcome: r.outcome.name(),
            runner_task: &r.task_name,
            runner_transcript_path: r.transcript_path.as_deref().map(DisplayPath),
            runner_exit_code: r.outcome.exit_code(),
            runner_skip_reason: r
                .outcome
                .kind
                .not_run()
                .then_some(r.outcome.message.as_str()),
            runner_checks: &r.checks,
            runner_git: r.git.as_ref(),
            runner_sandbox: r.sandbox.as_ref(),
            runner_network: r.network,
            runner_commands: &r.commands,
            runner_integrity: &r.integrity,
            runner_timing: r.timing,
            runner_rate_limit: r.rate_limit,
            runner_report_errors: &r.report_errors,
        }
    }
}

/// Adds the `type` that `#[serde(tag)]` writes first (schemars derives no tag for a struct).
fn result_type_tag(schema: &mut Schema) {
    if let Some(props) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        let rest = std::mem::take(props);
        props.insert("type".into(), json_schema!({"const": "result"}).into());
        props.extend(rest);
    }
    if let Some(required) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
        required.insert(0, "type".into());
    }
}

/// The error texts of a failed run: its `errors`, or the outcome's message when there are none.
pub fn error_texts(r: &RunResult) -> &[String] {
    if r.errors.is_empty() {
        std::slice::from_ref(&r.outcome.message)
    } else {
        &r.errors
    }
}

/// `modelUsage`: an object from model id to [`ModelUsageEntry`].
#[derive(Debug, Clone, Copy)]
pub struct ModelUsages<'a>(pub &'a BTreeMap<String, ModelUsage>);

impl Serialize for ModelUsages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.0
                .iter()
                .map(|(model, mu)| (model, ModelUsageEntry::from(mu))),
        )
    }
}

impl JsonSchema for ModelUsages<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ModelUsages".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let entry = g.subschema_for::<ModelUsageEntry>();
        json_schema!({"type": "object", "additionalProperties": entry})
    }
}

/// One model's usage and cost, in the SDK's `ModelUsage` shape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub(crate) struct ModelUsageEntry {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Always 0: runner offers no web search.
    pub web_search_requests: u64,
    /// Cost in USD; null when the model has no price.
    #[serde(rename = "costUSD")]
    pub cost_usd: Option<f64>,
    /// The model's context window, if known.
    pub context_window: Option<u64>,
    /// The model's output cap, if known.
    pub max_output_tokens: Option<u32>,
}

impl From<&ModelUsage> for ModelUsageEntry {
    fn from(mu: &ModelUsage) -> Self {
        ModelUsageEntry {
            input_tokens: mu.usage.input_tokens,
            output_tokens: mu.usage.output_tokens,
            cache_read_input_tokens: mu.usage.cache_read_input_tokens,
            cache_creation_input_tokens: mu.usage.cache_creation_input_tokens,
            web_search_requests: 0,
            cost_usd: mu.cost_usd,
            context_window: mu.context_window,
            max_output_tokens: mu.max_output_tokens,
        }
    }
}

/// `permission_denials`: an array of [`DenialEntry`].
#[derive(Debug, Clone, Copy)]
pub struct PermissionDenials<'a>(pub &'a [Denial]);

impl Serialize for PermissionDenials<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(DenialEntry::from))
    }
}

impl JsonSchema for PermissionDenials<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PermissionDenials".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let entry = g.subschema_for::<DenialEntry<'_>>();
        json_schema!({"type": "array", "items": entry})
    }
}

/// One denied call, in the SDK's `SDKPermissionDenial` shape plus `runner_reason`.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct DenialEntry<'a> {
    /// Tool name.
    pub tool_name: &'a str,
    /// The tool_use id.
    pub tool_use_id: &'a str,
    /// The input the model gave.
    pub tool_input: &'a Value,
    /// Why the policy denied it.
    pub runner_reason: &'a str,
}

impl<'a> From<&'a Denial> for DenialEntry<'a> {
    fn from(d: &'a Denial) -> Self {
        DenialEntry {
            tool_name: &d.tool_name,
            tool_use_id: &d.tool_use_id,
            tool_input: &d.tool_input,
            runner_reason: &d.reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    use serde_json::Value;

    use super::ResultMessage;
    use crate::contract::fixtures;

    #[test]
    fn what_cannot_be_written_as_is_is_written_as_null_or_lossily() {
        let mut r = fixtures::full_success();
        r.total_cost_usd = Some(f64::NAN);
        let not_utf8 = |b: &[u8]| PathBuf::from(OsStr::from_bytes(b));
        r.transcript_path = Some(not_utf8(b"t\xff.jsonl"));
        if let Some(g) = r.git.as_mut() {
            g.patch = Some(not_utf8(b"\xff.patch"));
        }
        let line = serde_json::to_vec(&ResultMessage::new(&r)).unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["total_cost_usd"], Value::Null);
        assert_eq!(v["runner_transcript_path"], "t\u{fffd}.jsonl");
        assert_eq!(v["runner_git"], Value::Null);
        assert_eq!(v["result"], r.result_text.as_str());
    }
}
