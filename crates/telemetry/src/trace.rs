//! One task's spans: the task span under the batch's, a span per turn under it, and under each
//! turn its model request and tool calls, in the OpenTelemetry GenAI semantic conventions. The
//! metrics of the same facts are recorded alongside.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SdkTracer;
use runner_protocol::model::Usage;

use crate::metrics::Instruments;

/// What the task span starts with.
#[derive(Debug, Clone, Default)]
pub struct TaskStart {
    /// The task's name (`gen_ai.agent.name`).
    pub name: String,
    /// The session id (`gen_ai.conversation.id`).
    pub session_id: String,
    /// The provider (`gen_ai.system`, `gen_ai.provider.name`).
    pub provider: String,
    /// The model asked for (`gen_ai.request.model`).
    pub model: String,
    /// The permission mode.
    pub permission_mode: String,
    /// How commands are confined (the sandbox's mode), when known.
    pub sandbox: Option<String>,
}

/// A failed model request that was retried: an event on the request's span.
#[derive(Debug, Clone)]
pub struct Retry {
    /// When it was decided.
    pub at: SystemTime,
    /// 1-based retry number.
    pub attempt: u32,
    /// The HTTP status, if the failure was one.
    pub status: Option<u16>,
    /// The error's category (`rate_limit`, `server_error`, ...).
    pub error: String,
    /// The wait before the retry.
    pub delay_ms: u64,
}

/// One model request (all its attempts).
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// Sent (first attempt).
    pub start: SystemTime,
    /// Answered in full.
    pub end: SystemTime,
    /// The model asked for.
    pub request_model: String,
    /// The model that answered (None: no answer).
    pub response_model: Option<String>,
    /// The response id.
    pub response_id: Option<String>,
    /// The usage reported.
    pub usage: Usage,
    /// Why the model stopped.
    pub finish_reason: Option<String>,
    /// The retries before the answer.
    pub retries: Vec<Retry>,
    /// The prompt text sent this turn, already redacted (content opted in only).
    pub input: Option<String>,
    /// The response text, already redacted (content opted in only).
    pub output: Option<String>,
}

/// What the permission policy decided about a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It ran.
    Allow,
    /// It was refused, and why.
    Deny(String),
}

/// One tool call.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// Asked for / started.
    pub start: SystemTime,
    /// Its result came back.
    pub end: SystemTime,
    /// The tool.
    pub name: String,
    /// The tool_use id.
    pub id: String,
    /// The permission decision.
    pub decision: Decision,
    /// The result is an error.
    pub is_error: bool,
    /// A command's exit code.
    pub exit_code: Option<i32>,
    /// A command was interrupted (the run was cancelled).
    pub interrupted: bool,
    /// A command was killed at its time limit.
    pub timed_out: bool,
    /// The call's input, already redacted (content opted in only).
    pub input: Option<String>,
    /// The call's result, already redacted (content opted in only).
    pub output: Option<String>,
}

/// Something that happened in a turn: an event on its span.
#[derive(Debug, Clone)]
pub struct Note {
    /// When.
    pub at: SystemTime,
    /// Event name.
    pub name: &'static str,
    /// Its attributes.
    pub attributes: Vec<(&'static str, String)>,
}

/// One turn: a model request and the tool calls of its answer.
#[derive(Debug, Clone)]
pub struct Turn {
    /// 1-based.
    pub number: u32,
    /// Started.
    pub start: SystemTime,
    /// Ended.
    pub end: SystemTime,
    /// The model request, if one was made.
    pub request: Option<ModelRequest>,
    /// The tool calls, in order.
    pub tools: Vec<ToolCall>,
    /// Other events.
    pub notes: Vec<Note>,
}

/// How the task ended.
#[derive(Debug, Clone, Default)]
pub struct TaskEnd {
    /// The outcome's name (`success`, `error_max_turns`, ...).
    pub outcome: String,
    /// The outcome is an error.
    pub is_error: bool,
    /// Its message.
    pub message: String,
    /// Turns taken.
    pub turns: u32,
    /// Summed usage.
    pub usage: Usage,
    /// Total cost, when the model has a price.
    pub cost_usd: Option<f64>,
    /// The model.
    pub model: String,
}

/// Shared by the run's task traces.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) tracer: SdkTracer,
    pub(crate) instruments: Instruments,
    pub(crate) content: bool,
    /// The tasks seen, by name: `Some` while the task's span is open, `None` once it ended.
    pub(crate) tasks: Mutex<HashMap<String, Option<Context>>>,
}

impl Shared {
    pub(crate) fn tasks(&self) -> MutexGuard<'_, HashMap<String, Option<Context>>> {
        // A panic elsewhere while the map was held leaves it usable.
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// End a task's span (`cx`'s) with how the task ended, and count the task.
    pub(crate) fn end_task(&self, cx: &Context, e: &TaskEnd) {
        let m = &self.instruments;
        let span = cx.span();
        let input = e
            .usage
            .input_tokens
            .saturating_add(e.usage.cache_read_input_tokens)
            .saturating_add(e.usage.cache_creation_input_tokens);
        span.set_attributes([
            kv("runner.task.outcome", e.outcome.clone()),
            kv("runner.task.turns", i64::from(e.turns)),
            kv("gen_ai.usage.input_tokens", tokens(input)),
            kv("gen_ai.usage.output_tokens", tokens(e.usage.output_tokens)),
        ]);
        if let Some(c) = e.cost_usd {
            span.set_attribute(kv("runner.cost_usd", c));
            m.cost
                .add(c, &[kv("gen_ai.request.model", e.model.clone())]);
        }
        if e.is_error {
            span.set_attribute(kv("error.type", e.outcome.clone()));
            span.set_status(Status::error(e.message.clone()));
        }
        span.end();
        m.tasks
            .add(1, &[kv("runner.task.outcome", e.outcome.clone())]);
    }

    /// At the run's end: end the span of each task in `ends` whose span is still open (a
    /// second signal cut it short), and give one to each task that never had one (skipped,
    /// not started), so every task of the run has its span and is counted once.
    pub(crate) fn end_remaining(&self, parent: &Context, ends: &[(String, TaskEnd)]) {
        let mut seen = std::mem::take(&mut *self.tasks());
        for (name, e) in ends {
            let cx = match seen.remove(name) {
                Some(Some(cx)) => cx,
                Some(None) => continue,
                None => {
                    let span = self
                        .tracer
                        .span_builder(format!("invoke_agent {name}"))
                        .with_attributes([
                            kv("gen_ai.operation.name", "invoke_agent"),
                            kv("gen_ai.agent.name", name.clone()),
                            kv("gen_ai.request.model", e.model.clone()),
                        ])
                        .start_with_context(&self.tracer, parent);
                    parent.with_span(span)
                }
            };
            self.end_task(&cx, e);
        }
        // Open spans of tasks the batch did not report (none, normally): ended as they are.
        for cx in seen.into_values().flatten() {
            cx.span().end();
        }
    }
}

/// The spans of one task. Dropped without [`TaskTrace::end`] (its task was cut short), its
/// span stays open for [`crate::Telemetry::shutdown`] to end with the batch's outcome.
#[derive(Debug)]
pub struct TaskTrace {
    shared: Arc<Shared>,
    cx: Context,
    name: String,
    provider: String,
}

fn kv(key: &'static str, value: impl Into<Value>) -> KeyValue {
    KeyValue::new(key, value)
}

fn tokens(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl TaskTrace {
    pub(crate) fn start(shared: Arc<Shared>, parent: &Context, t: TaskStart) -> TaskTrace {
        let mut attrs = vec![
            kv("gen_ai.operation.name", "invoke_agent"),
            kv("gen_ai.agent.name", t.name.clone()),
            kv("gen_ai.conversation.id", t.session_id),
            kv("gen_ai.system", t.provider.clone()),
            kv("gen_ai.provider.name", t.provider.clone()),
            kv("gen_ai.request.model", t.model),
            kv("runner.permission_mode", t.permission_mode),
        ];
        if let Some(s) = t.sandbox {
            attrs.push(kv("runner.sandbox", s));
        }
        let span = shared
            .tracer
            .span_builder(format!("invoke_agent {}", t.name))
            .with_kind(SpanKind::Internal)
            .with_attributes(attrs)
            .start_with_context(&shared.tracer, parent);
        let cx = parent.with_span(span);
        shared.tasks().insert(t.name.clone(), Some(cx.clone()));
        TaskTrace {
            cx,
            shared,
            name: t.name,
            provider: t.provider,
        }
    }

    /// Whether prompt and tool content may go on the spans (then redacted by the caller).
    pub fn content(&self) -> bool {
        self.shared.content
    }

    /// Record one finished turn: its span, its children and their metrics.
    pub fn turn(&mut self, turn: Turn) {
        let tracer = &self.shared.tracer;
        let mut span = tracer
            .span_builder(format!("turn {}", turn.number))
            .with_start_time(turn.start)
            .with_attributes(vec![kv("runner.turn", i64::from(turn.number))])
            .start_with_context(tracer, &self.cx);
        for n in &turn.notes {
            let attrs = n
                .attributes
                .iter()
                .map(|(k, v)| KeyValue::new(*k, v.clone()))
                .collect();
            span.add_event_with_timestamp(n.name, n.at, attrs);
        }
        let cx = self.cx.with_span(span);
        if let Some(r) = &turn.request {
            self.request(&cx, r);
        }
        for t in &turn.tools {
            self.tool(&cx, t);
        }
        cx.span().end_with_timestamp(turn.end);
    }

    fn request(&self, cx: &Context, r: &ModelRequest) {
        let tracer = &self.shared.tracer;
        let m = &self.shared.instruments;
        let input_tokens = r
            .usage
            .input_tokens
            .saturating_add(r.usage.cache_read_input_tokens)
            .saturating_add(r.usage.cache_creation_input_tokens);
        let mut attrs = vec![
            kv("gen_ai.operation.name", "chat"),
            kv("gen_ai.system", self.provider.clone()),
            kv("gen_ai.provider.name", self.provider.clone()),
            kv("gen_ai.request.model", r.request_model.clone()),
            kv("gen_ai.usage.input_tokens", tokens(input_tokens)),
            kv("gen_ai.usage.output_tokens", tokens(r.usage.output_tokens)),
            kv(
                "gen_ai.usage.cache_read.input_tokens",
                tokens(r.usage.cache_read_input_tokens),
            ),
            kv(
                "gen_ai.usage.cache_creation.input_tokens",
                tokens(r.usage.cache_creation_input_tokens),
            ),
            kv("runner.retries", r.retries.len() as i64),
        ];
        if let Some(model) = &r.response_model {
            attrs.push(kv("gen_ai.response.model", model.clone()));
        }
        if let Some(id) = &r.response_id {
            attrs.push(kv("gen_ai.response.id", id.clone()));
        }
        if let Some(f) = &r.finish_reason {
            attrs.push(kv(
                "gen_ai.response.finish_reasons",
                Value::Array(Array::String(vec![StringValue::from(f.clone())])),
            ));
        }
        if let Some(text) = &r.input {
            attrs.push(kv("gen_ai.input.messages", text.clone()));
        }
        if let Some(text) = &r.output {
            attrs.push(kv("gen_ai.output.messages", text.clone()));
        }
        let name = format!("chat {}", r.request_model);
        let mut span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_start_time(r.start)
            .with_attributes(attrs)
            .start_with_context(tracer, cx);
        for retry in &r.retries {
            let mut a = vec![
                kv("runner.retry.attempt", i64::from(retry.attempt)),
                kv("error.type", retry.error.clone()),
                kv("runner.retry.delay_ms", tokens(retry.delay_ms)),
            ];
            if let Some(s) = retry.status {
                a.push(kv("http.response.status_code", i64::from(s)));
            }
            span.add_event_with_timestamp("retry", retry.at, a);
            m.retries.add(1, &[kv("error.type", retry.error.clone())]);
        }
        if r.response_model.is_none() {
            span.set_status(Status::error("no response"));
        }
        span.end_with_timestamp(r.end);

        let model = [
            kv("gen_ai.provider.name", self.provider.clone()),
            kv("gen_ai.request.model", r.request_model.clone()),
        ];
        m.requests.add(1, &model);
        let secs = r
            .end
            .duration_since(r.start)
            .unwrap_or_default()
            .as_secs_f64();
        m.operation_duration.record(secs, &model);
        for (kind, n) in [("input", input_tokens), ("output", r.usage.output_tokens)] {
            let mut a = model.to_vec();
            a.push(kv("gen_ai.token.type", kind));
            m.token_usage.record(n, &a);
        }
        for (kind, n) in [
            ("input", r.usage.input_tokens),
            ("output", r.usage.output_tokens),
            ("cache_read", r.usage.cache_read_input_tokens),
            ("cache_creation", r.usage.cache_creation_input_tokens),
        ] {
            let mut a = model.to_vec();
            a.push(kv("runner.token.kind", kind));
            m.tokens.add(n, &a);
        }
    }

    fn tool(&self, cx: &Context, t: &ToolCall) {
        let tracer = &self.shared.tracer;
        let m = &self.shared.instruments;
        let mut attrs = vec![
            kv("gen_ai.operation.name", "execute_tool"),
            kv("gen_ai.tool.name", t.name.clone()),
            kv("gen_ai.tool.call.id", t.id.clone()),
        ];
        match &t.decision {
            Decision::Allow => attrs.push(kv("runner.permission.decision", "allow")),
            Decision::Deny(why) => {
                attrs.push(kv("runner.permission.decision", "deny"));
                attrs.push(kv("runner.permission.reason", why.clone()));
            }
        }
        attrs.push(kv("runner.tool.is_error", t.is_error));
        if let Some(code) = t.exit_code {
            attrs.push(kv("process.exit.code", i64::from(code)));
        }
        if t.interrupted {
            attrs.push(kv("runner.sandbox.interrupted", true));
        }
        if t.timed_out {
            attrs.push(kv("runner.sandbox.timed_out", true));
        }
        if let Some(text) = &t.input {
            attrs.push(kv("gen_ai.tool.call.arguments", text.clone()));
        }
        if let Some(text) = &t.output {
            attrs.push(kv("gen_ai.tool.call.result", text.clone()));
        }
        let outcome = match (&t.decision, t.is_error) {
            (Decision::Deny(_), _) => "denied",
            (Decision::Allow, true) => "error",
            (Decision::Allow, false) => "ok",
        };
        if outcome != "ok" {
            attrs.push(kv("error.type", outcome));
        }
        let mut span = tracer
            .span_builder(format!("execute_tool {}", t.name))
            .with_start_time(t.start)
            .with_attributes(attrs)
            .start_with_context(tracer, cx);
        if outcome != "ok" {
            span.set_status(Status::error(outcome));
        }
        span.end_with_timestamp(t.end);

        let name = kv("gen_ai.tool.name", t.name.clone());
        if matches!(t.decision, Decision::Deny(_)) {
            m.denials.add(1, std::slice::from_ref(&name));
        } else {
            let secs = t
                .end
                .duration_since(t.start)
                .unwrap_or_default()
                .as_secs_f64();
            m.tool_duration
                .record(secs, &[name, kv("runner.tool.outcome", outcome)]);
        }
    }

    /// End the task span with how the task ended, and count the task.
    pub fn end(self, e: TaskEnd) {
        let open = self.shared.tasks().insert(self.name.clone(), None);
        // Not open any more: the run's end came first and reported the task itself.
        if open.flatten().is_some() {
            self.shared.end_task(&self.cx, &e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};

    fn end(outcome: &str, is_error: bool) -> TaskEnd {
        TaskEnd {
            outcome: outcome.into(),
            is_error,
            ..Default::default()
        }
    }

    fn start(name: &str) -> TaskStart {
        TaskStart {
            name: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_run_end_gives_every_task_one_span_with_its_outcome() {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let meters = SdkMeterProvider::builder().build();
        let shared = Arc::new(Shared {
            tracer: provider.tracer("test"),
            instruments: Instruments::new(&meters.meter("test")),
            content: false,
            tasks: Default::default(),
        });
        let batch = Context::new();
        TaskTrace::start(shared.clone(), &batch, start("done")).end(end("success", false));
        // Cut short: its task is still running when the run ends.
        let cut = TaskTrace::start(shared.clone(), &batch, start("cut"));
        // Dropped unended: its span waits for the run's end.
        drop(TaskTrace::start(shared.clone(), &batch, start("dropped")));
        assert_eq!(exporter.get_finished_spans().unwrap().len(), 1);

        shared.end_remaining(
            &batch,
            &[
                ("done".into(), end("success", false)),
                ("cut".into(), end("interrupted", true)),
                ("dropped".into(), end("interrupted", true)),
                ("never".into(), end("skipped", false)),
            ],
        );
        // The cut-short task ending after the run's end records nothing more.
        cut.end(end("success", false));

        let spans = exporter.get_finished_spans().unwrap();
        let outcome = |name: &str| {
            let found: Vec<_> = spans
                .iter()
                .filter(|s| s.name == format!("invoke_agent {name}"))
                .collect();
            assert_eq!(found.len(), 1, "{name}: {spans:?}");
            found[0]
                .attributes
                .iter()
                .find(|kv| kv.key.as_str() == "runner.task.outcome")
                .map(|kv| kv.value.to_string())
        };
        assert_eq!(spans.len(), 4);
        assert_eq!(outcome("done").as_deref(), Some("success"));
        assert_eq!(outcome("cut").as_deref(), Some("interrupted"));
        assert_eq!(outcome("dropped").as_deref(), Some("interrupted"));
        assert_eq!(outcome("never").as_deref(), Some("skipped"));
    }
}
