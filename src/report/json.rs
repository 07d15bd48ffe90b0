//! The `result` object (the SDK's result message plus `runner_*` fields) and the `json`
//! output format, which prints exactly that object, one line per task.

use std::io;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::events::{ModelUsage, RunEvent, RunResult, Sink};
use crate::model::Usage;
use crate::redact::Redactor;
use crate::report::{SharedOut, write_json_line};

/// The `result` frame for a finished task (not redacted; sinks redact what they write).
///
/// Fields follow the SDK's `SDKResultSuccess | SDKResultError`: `result` on success, `errors`
/// otherwise; `total_cost_usd` and `costUSD` are `null` when the cost is unknown (never 0).
pub fn result_value(r: &RunResult) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "result".into());
    m.insert("subtype".into(), r.outcome.subtype().into());
    m.insert("is_error".into(), r.outcome.is_error().into());
    m.insert("duration_ms".into(), r.duration_ms.into());
    m.insert("duration_api_ms".into(), r.duration_api_ms.into());
    m.insert("num_turns".into(), r.num_turns.into());
    if r.outcome.is_error() {
        m.insert("errors".into(), error_texts(r).into());
    } else {
        m.insert("result".into(), r.result_text.clone().into());
    }
    if let Some(v) = &r.structured_output {
        m.insert("structured_output".into(), v.clone());
    }
    m.insert(
        "stop_reason".into(),
        r.stop_reason
            .as_ref()
            .map_or(Value::Null, |s| s.as_str().into()),
    );
    m.insert("session_id".into(), r.session_id.clone().into());
    m.insert("total_cost_usd".into(), opt_f64(r.total_cost_usd));
    m.insert("usage".into(), usage_value(&r.usage));
    m.insert(
        "modelUsage".into(),
        Value::Object(
            r.model_usage
                .iter()
                .map(|(model, mu)| (model.clone(), model_usage_value(mu)))
                .collect(),
        ),
    );
    m.insert(
        "permission_denials".into(),
        r.permission_denials
            .iter()
            .map(|d| {
                json!({
                    "tool_name": d.tool_name,
                    "tool_use_id": d.tool_use_id,
                    "tool_input": d.tool_input,
                    "runner_reason": d.reason,
                })
            })
            .collect::<Vec<_>>()
            .into(),
    );
    m.insert("terminal_reason".into(), r.outcome.terminal_reason().into());
    m.insert("uuid".into(), r.uuid.clone().into());
    m.insert("runner_outcome".into(), r.outcome.name().into());
    m.insert("runner_task".into(), r.task_name.clone().into());
    m.insert(
        "runner_transcript_path".into(),
        r.transcript_path
            .as_ref()
            .map_or(Value::Null, |p| p.display().to_string().into()),
    );
    m.insert("runner_exit_code".into(), r.outcome.exit_code().into());
    if r.outcome.kind == crate::outcome::OutcomeKind::Skipped {
        m.insert(
            "runner_skip_reason".into(),
            r.outcome.message.clone().into(),
        );
    }
    if !r.checks.is_empty() {
        m.insert(
            "runner_checks".into(),
            serde_json::to_value(&r.checks).unwrap_or(Value::Null),
        );
    }
    if let Some(g) = &r.git {
        m.insert(
            "runner_git".into(),
            serde_json::to_value(g).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

/// The error texts of a failed run: its `errors`, or the outcome's message when there are none.
pub fn error_texts(r: &RunResult) -> Vec<String> {
    if r.errors.is_empty() {
        vec![r.outcome.message.clone()]
    } else {
        r.errors.clone()
    }
}

/// Anthropic's snake_case usage object.
pub fn usage_value(u: &Usage) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "output_tokens": u.output_tokens,
    })
}

fn model_usage_value(mu: &ModelUsage) -> Value {
    json!({
        "inputTokens": mu.usage.input_tokens,
        "outputTokens": mu.usage.output_tokens,
        "cacheReadInputTokens": mu.usage.cache_read_input_tokens,
        "cacheCreationInputTokens": mu.usage.cache_creation_input_tokens,
        "webSearchRequests": 0,
        "costUSD": opt_f64(mu.cost_usd),
        "contextWindow": mu.context_window,
        "maxOutputTokens": mu.max_output_tokens,
    })
}

fn opt_f64(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// The `json` output format: writes the redacted result object of each task as one line.
pub struct JsonSink {
    out: SharedOut,
    redactor: Arc<Redactor>,
}

impl JsonSink {
    /// A sink writing to `out`, redacting with `redactor`.
    pub fn new(out: SharedOut, redactor: Arc<Redactor>) -> Self {
        JsonSink { out, redactor }
    }
}

impl Sink for JsonSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        if let RunEvent::Result(r) = event {
            let mut v = result_value(r);
            self.redactor.redact_value(&mut v);
            write_json_line(&self.out, &v)?;
        }
        Ok(())
    }
}
