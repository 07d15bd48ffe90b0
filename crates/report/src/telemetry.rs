//! The OpenTelemetry sink: turns one task's run events into the spans and metrics
//! `runner_telemetry` exports (a span per turn, with its model request and tool calls under it).
//!
//! Events carry no start times, so the sink notes when each arrives: a turn's span ends at its
//! `runner_timing` event and starts its wall time before; the model request sits after the
//! turn's request-building phase for its retry, wait and stream phases; a tool call runs from
//! its start (its `runner_tool_started` record, or the answer that asked for it) to its result.
//! Prompt and tool content goes on the spans only when opted in, redacted like every artefact.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use runner_telemetry::{
    Decision, ModelRequest, Note, Retry, TaskEnd, TaskStart, TaskTrace, Telemetry, ToolCall, Turn,
};
use serde_json::Value;

use crate::events::{RunEvent, Sink};
use crate::model::ContentBlock;
use crate::redact::Redactor;

/// A tool call asked for and not yet answered.
struct Pending {
    start: SystemTime,
    name: String,
    input: Option<String>,
    denied: Option<String>,
}

/// What the current turn has seen so far.
#[derive(Default)]
struct TurnSoFar {
    retries: Vec<Retry>,
    notes: Vec<Note>,
    request: Option<ModelRequest>,
    pending: HashMap<String, Pending>,
    tools: Vec<ToolCall>,
    input: Vec<String>,
}

/// Feeds one task's events to its [`TaskTrace`].
pub struct TelemetrySink {
    trace: Option<TaskTrace>,
    telemetry: Arc<Telemetry>,
    redactor: Arc<Redactor>,
    model: String,
    turn: TurnSoFar,
    turn_number: u32,
    turn_start: SystemTime,
    content: bool,
}

impl TelemetrySink {
    /// A sink recording into `telemetry`; prompt and tool content goes on the spans when
    /// `content` (the run's `--otel-content` or the spec's `telemetry.content`), redacted with
    /// `redactor`.
    pub fn new(telemetry: Arc<Telemetry>, redactor: Arc<Redactor>, content: bool) -> TelemetrySink {
        TelemetrySink {
            trace: None,
            telemetry,
            redactor,
            model: String::new(),
            turn: TurnSoFar::default(),
            turn_number: 0,
            turn_start: SystemTime::now(),
            content,
        }
    }

    fn content(&self) -> bool {
        self.content
    }

    fn redacted(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// Record the turn so far, ending at `end` (its `wall_ms`, when timed), and start the next.
    fn close_turn(&mut self, end: SystemTime, timed: Option<(u64, &crate::events::Phases)>) {
        let mut t = std::mem::take(&mut self.turn);
        if t.request.is_none() && t.tools.is_empty() && t.retries.is_empty() && timed.is_none() {
            return;
        }
        self.turn_number += 1;
        let start = match timed {
            Some((wall, _)) => end
                .checked_sub(Duration::from_millis(wall))
                .unwrap_or(self.turn_start),
            None => self.turn_start,
        };
        if let Some(r) = &mut t.request {
            r.retries = std::mem::take(&mut t.retries);
            if let Some((_, p)) = timed {
                r.start = start + Duration::from_millis(p.request_build_ms);
                r.end = r.start + Duration::from_millis(p.retry_ms + p.ttfb_ms + p.stream_ms);
            }
            if !t.input.is_empty() {
                r.input = Some(t.input.join("\n\n"));
            }
        } else if !t.retries.is_empty() {
            // Retried, and never answered: the request span still shows its attempts.
            t.request = Some(ModelRequest {
                start,
                end,
                request_model: self.model.clone(),
                response_model: None,
                response_id: None,
                usage: Default::default(),
                finish_reason: None,
                retries: std::mem::take(&mut t.retries),
                input: None,
                output: None,
            });
        }
        // Calls asked for whose result never came (the run was cut short).
        for (id, p) in t.pending.drain() {
            t.tools.push(tool_call(id, p, end, true, None));
        }
        if let Some(trace) = &mut self.trace {
            trace.turn(Turn {
                number: self.turn_number,
                start,
                end,
                request: t.request,
                tools: t.tools,
                notes: t.notes,
            });
        }
        self.turn_start = end;
    }

    fn note(&mut self, name: &'static str, attributes: Vec<(&'static str, String)>) {
        self.turn.notes.push(Note {
            at: SystemTime::now(),
            name,
            attributes,
        });
    }
}

fn tool_call(
    id: String,
    p: Pending,
    end: SystemTime,
    is_error: bool,
    result: Option<(&Option<Value>, Option<String>)>,
) -> ToolCall {
    let (structured, output) = match result {
        Some((v, o)) => (v.as_ref(), o),
        None => (None, None),
    };
    let field = |k: &str| structured.and_then(|v| v.get(k));
    ToolCall {
        start: p.start,
        end,
        name: p.name,
        id,
        decision: p.denied.map_or(Decision::Allow, Decision::Deny),
        is_error,
        exit_code: field("exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        interrupted: field("interrupted").and_then(Value::as_bool) == Some(true),
        timed_out: field("timedOutAfterMs").is_some(),
        input: p.input,
        output,
    }
}

impl Sink for TelemetrySink {
    fn emit(&mut self, event: &RunEvent) -> std::io::Result<()> {
        let now = SystemTime::now();
        match event {
            RunEvent::Init(i) => {
                self.model = i.model.clone();
                self.turn_start = now;
                if self.trace.is_none() {
                    self.trace = Some(self.telemetry.task(TaskStart {
                        name: i.task_name.clone(),
                        session_id: i.session_id.clone(),
                        provider: i.provider.clone(),
                        model: i.model.clone(),
                        permission_mode: i.permission_mode.clone(),
                        sandbox: i.sandbox.as_ref().map(|s| s.mode.clone()),
                    }));
                }
            }
            RunEvent::UserText { text, .. } | RunEvent::CompactSummary { text, .. }
                if self.content() =>
            {
                let t = self.redacted(text);
                self.turn.input.push(t);
            }
            RunEvent::AssistantBlockStreamed {
                block: ContentBlock::ToolUse { id, name, input },
                ..
            } => {
                let input = self.content().then(|| self.redacted(&input.to_string()));
                self.turn.pending.entry(id.clone()).or_insert(Pending {
                    start: now,
                    name: name.clone(),
                    input,
                    denied: None,
                });
            }
            RunEvent::AssistantResponse { meta, blocks } => {
                let content = self.content();
                let mut text = Vec::new();
                for b in blocks {
                    match &b.block {
                        ContentBlock::ToolUse { id, name, input } => {
                            let input = content.then(|| self.redacted(&input.to_string()));
                            self.turn.pending.entry(id.clone()).or_insert(Pending {
                                start: now,
                                name: name.clone(),
                                input,
                                denied: None,
                            });
                        }
                        ContentBlock::Text { text: t, .. } if content => {
                            text.push(self.redacted(t));
                        }
                        _ => {}
                    }
                }
                self.turn.request = Some(ModelRequest {
                    start: self.turn_start,
                    end: now,
                    request_model: self.model.clone(),
                    response_model: Some(meta.model.clone()),
                    response_id: Some(meta.message_id.clone()).filter(|s| !s.is_empty()),
                    usage: meta.usage,
                    finish_reason: meta.stop_reason.as_ref().map(|s| s.as_str().to_string()),
                    retries: Vec::new(),
                    input: None,
                    output: content.then(|| text.join("\n")),
                });
            }
            RunEvent::ToolStarted { tool_use_id, .. } => {
                if let Some(p) = self.turn.pending.get_mut(tool_use_id) {
                    p.start = now;
                }
            }
            RunEvent::PermissionDenied(d) => {
                let reason = self.redacted(&d.reason);
                let p = self
                    .turn
                    .pending
                    .entry(d.tool_use_id.clone())
                    .or_insert(Pending {
                        start: now,
                        name: d.tool_name.clone(),
                        input: None,
                        denied: None,
                    });
                p.denied = Some(reason);
            }
            RunEvent::ToolResult {
                block:
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    },
                tool_use_result,
                ..
            } => {
                if let Some(p) = self.turn.pending.remove(tool_use_id) {
                    let output = self.content().then(|| self.redacted(content));
                    let call = tool_call(
                        tool_use_id.clone(),
                        p,
                        now,
                        *is_error,
                        Some((tool_use_result, output)),
                    );
                    self.turn.tools.push(call);
                }
            }
            RunEvent::ApiRetry {
                attempt,
                retry_delay_ms,
                error_status,
                error,
                ..
            } => self.turn.retries.push(Retry {
                at: now,
                attempt: *attempt,
                status: *error_status,
                error: error.clone(),
                delay_ms: *retry_delay_ms,
            }),
            RunEvent::AttemptAbandoned { attempt, error, .. } => {
                let error = self.redacted(error);
                self.note(
                    "attempt_abandoned",
                    vec![
                        ("runner.attempt", attempt.to_string()),
                        ("error.type", error),
                    ],
                );
            }
            RunEvent::ModelFallback { from, to, .. } => {
                self.model = to.clone();
                self.note(
                    "model_fallback",
                    vec![
                        ("runner.model.from", from.clone()),
                        ("runner.model.to", to.clone()),
                    ],
                );
            }
            RunEvent::CompactBoundary { pre_tokens, .. } => {
                self.note(
                    "compaction",
                    vec![("runner.pre_tokens", pre_tokens.to_string())],
                );
            }
            RunEvent::Network { attempt, .. } => {
                let verdict = if attempt.allowed { "allowed" } else { "denied" };
                self.note(
                    "network",
                    vec![
                        ("server.address", attempt.host.clone()),
                        ("runner.sandbox.network", verdict.to_string()),
                    ],
                );
            }
            RunEvent::Integrity { change, .. } => {
                self.note(
                    "integrity",
                    vec![("file.path", change.path.display().to_string())],
                );
            }
            RunEvent::Timing {
                wall_ms, phases, ..
            } => {
                self.close_turn(now, Some((*wall_ms, phases)));
            }
            RunEvent::Result(r) => {
                self.close_turn(now, None);
                if let Some(trace) = self.trace.take() {
                    trace.end(TaskEnd {
                        outcome: r.outcome.name().to_string(),
                        is_error: r.outcome.is_error(),
                        message: self.redacted(&r.outcome.message),
                        turns: r.num_turns,
                        usage: r.usage,
                        cost_usd: r.total_cost_usd,
                        model: r.model.clone(),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }
}
