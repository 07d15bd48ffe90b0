//! OpenAI Chat Completions stream chunks → provider-neutral [`StreamEvent`]s.
//!
//! Chat Completions has no block events, so [`ChunkMapper`] synthesizes them:
//!
//! * the first chunk → `MessageStart` (chunk `id` and `model`);
//! * `delta.content` → a text block (opened on the first non-empty fragment, closed when a tool
//!   call starts or the choice finishes); `delta.refusal` likewise, and it makes the stop
//!   reason `refusal`; `delta.reasoning_content` / `delta.reasoning` (vLLM, Ollama, DeepSeek)
//!   → a thinking block without a signature;
//! * `delta.tool_calls[]` → one tool_use block per call `index`: opened once its `id` and
//!   `function.name` are known (the first fragment, normally), each `function.arguments`
//!   string fragment an `InputJsonDelta`. Calls may interleave;
//! * `finish_reason` → every open block is closed (`BlockStop`), except, after `length`,
//!   tool calls whose arguments do not parse: those are left open so the assembler drops them
//!   (as with Anthropic's `max_tokens` mid-tool-input) and they never run;
//! * `usage` (the final chunk with `stream_options.include_usage`, `choices: []`) →
//!   `prompt_tokens` minus `prompt_tokens_details.cached_tokens` as input, the cached tokens
//!   as cache reads, `completion_tokens` as output;
//! * `data: [DONE]` → `MessageDelta` (stop reason, usage) and `MessageStop`.
//!
//! A stream that ends without `[DONE]` after a `finish_reason` is accepted (some servers omit
//! it); one that ends before any `finish_reason`, or whose last chunk was cut off mid-JSON, is
//! [`ProviderError::Incomplete`] (retryable, like a dropped Anthropic stream). A chunk that is
//! not JSON before that is a corrupt stream: a transport fault, retried the same way. A chunk
//! carrying `{"error": {...}}` (vLLM, gateways) or an `event: error` is
//! [`ProviderError::StreamError`].

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};

use crate::provider::{EventStream, ProviderError, StreamEvent};
use crate::sse::{SseEvents, corrupt};
use crate::types::{StopReason, Usage};

/// Characters per token for the usage estimate when the server reports none.
pub(crate) const CHARS_PER_TOKEN: usize = 4;

/// How to fill in usage when the stream carries none.
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimate {
    /// Characters of the request's prompt (system, messages, tools), for input tokens.
    pub prompt_chars: usize,
}

/// One tool call being assembled, keyed by its OpenAI `index`.
#[derive(Debug, Default)]
struct ToolSlot {
    /// runner block index, once the block was started.
    block: Option<usize>,
    id: String,
    name: String,
    /// Arguments received before the block could start.
    pending: String,
    /// All arguments so far (to check they parse after `length`).
    args: String,
    closed: bool,
}

/// Maps decoded chunks of one response to [`StreamEvent`]s.
#[derive(Debug)]
pub struct ChunkMapper {
    requested_model: String,
    estimate: Option<Estimate>,
    started: bool,
    next_index: usize,
    /// Open text-like block: (block index, kind).
    open_text: Option<(usize, TextKind)>,
    tools: BTreeMap<u64, ToolSlot>,
    finish_reason: Option<String>,
    refused: bool,
    usage: Option<Usage>,
    output_chars: usize,
    finished_blocks: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    Text,
    Thinking,
}

fn malformed(what: impl std::fmt::Display) -> ProviderError {
    ProviderError::Malformed(format!("chat.completion.chunk: {what}"))
}

/// The `finish_reason` → runner stop reason mapping. `had_tools`: the response holds tool
/// calls (some servers say `stop` even then; the calls must still run).
pub(crate) fn map_finish_reason(reason: &str, had_tools: bool) -> StopReason {
    match reason {
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "stop" | "eos" | "end_turn" if had_tools => StopReason::ToolUse,
        "stop" | "eos" | "end_turn" => StopReason::EndTurn,
        "length" | "max_tokens" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// Usage from an OpenAI `usage` object; `None` when absent or null.
fn parse_usage(v: Option<&Value>) -> Result<Option<Usage>, ProviderError> {
    let m = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(m)) => m,
        Some(other) => return Err(malformed(format!("`usage` is not an object: {other}"))),
    };
    let n = |k: &str| m.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cached = m
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let prompt = n("prompt_tokens");
    Ok(Some(Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: n("completion_tokens"),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cached.min(prompt),
    }))
}

fn opt_str<'v>(v: &'v Value, key: &str) -> Result<Option<&'v str>, ProviderError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(malformed(format!("`{key}` is not a string: {other}"))),
    }
}

/// The in-stream error of a chunk (`{"error": {...}}`), if it is one.
fn stream_error(v: &Value) -> Option<ProviderError> {
    let err = v.get("error").filter(|e| !e.is_null())?;
    let field = |k: &str| err.get(k).and_then(Value::as_str).map(str::to_string);
    Some(ProviderError::StreamError {
        error_type: field("type")
            .or_else(|| field("code"))
            .or_else(|| {
                err.get("code")
                    .filter(|c| c.is_number())
                    .map(Value::to_string)
            })
            .unwrap_or_else(|| "unknown".into()),
        message: field("message")
            .or_else(|| err.as_str().map(str::to_string))
            .unwrap_or_else(|| err.to_string()),
    })
}

impl ChunkMapper {
    /// A mapper for one response to a request for `requested_model`. With `estimate`, a
    /// response without usage gets estimated figures (~[`CHARS_PER_TOKEN`] chars per token).
    pub fn new(requested_model: &str, estimate: Option<Estimate>) -> Self {
        ChunkMapper {
            requested_model: requested_model.to_string(),
            estimate,
            started: false,
            next_index: 0,
            open_text: None,
            tools: BTreeMap::new(),
            finish_reason: None,
            refused: false,
            usage: None,
            output_chars: 0,
            finished_blocks: false,
        }
    }

    /// Whether a `finish_reason` has been seen.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Map one SSE event (`event:` name and `data:`). `Ok(true)` means `[DONE]`: the caller
    /// should call [`ChunkMapper::done`] and stop.
    pub fn push_sse(
        &mut self,
        name: Option<&str>,
        data: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        let Some(data) = data.map(str::trim).filter(|d| !d.is_empty()) else {
            return Ok(false);
        };
        if data == "[DONE]" {
            return Ok(true);
        }
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(_) if name == Some("error") => {
                return Err(ProviderError::StreamError {
                    error_type: "unknown".into(),
                    message: data.to_string(),
                });
            }
            Err(e) => {
                return Err(corrupt(format!(
                    "chat.completion.chunk: data is not valid JSON: {e}"
                )));
            }
        };
        if let Some(e) = stream_error(&v) {
            return Err(e);
        }
        if name == Some("error") {
            return Err(ProviderError::StreamError {
                error_type: "unknown".into(),
                message: data.to_string(),
            });
        }
        self.push_chunk(&v, out)?;
        Ok(false)
    }

    /// Map one decoded chunk object.
    pub fn push_chunk(
        &mut self,
        v: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if !v.is_object() {
            return Err(malformed(format!("expected an object, got {v}")));
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::MessageStart {
                id: opt_str(v, "id")?.unwrap_or("chatcmpl-unknown").to_string(),
                model: opt_str(v, "model")?
                    .filter(|m| !m.is_empty())
                    .unwrap_or(&self.requested_model)
                    .to_string(),
                usage: Usage::default(),
            });
        }
        if let Some(u) = parse_usage(v.get("usage"))? {
            self.usage = Some(u);
        }
        let choices = match v.get("choices") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(c)) => c,
            Some(other) => return Err(malformed(format!("`choices` is not an array: {other}"))),
        };
        for choice in choices {
            // runner asks for one choice; ignore any other.
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if self.finish_reason.is_some() {
                tracing::debug!("ignoring a choice delta after finish_reason");
                continue;
            }
            if let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) {
                self.push_delta(delta, out)?;
            }
            if let Some(reason) = opt_str(choice, "finish_reason")? {
                self.finish(reason, out);
            }
        }
        Ok(())
    }

    fn push_delta(
        &mut self,
        delta: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        for key in ["reasoning_content", "reasoning"] {
            if let Some(t) = opt_str(delta, key)?.filter(|t| !t.is_empty()) {
                let index = self.text_block(TextKind::Thinking, out);
                self.output_chars += t.chars().count();
                out.push(StreamEvent::ThinkingDelta {
                    index,
                    thinking: t.to_string(),
                });
                break;
            }
        }
        if let Some(t) = opt_str(delta, "content")?.filter(|t| !t.is_empty()) {
            self.text(t, out);
        }
        if let Some(t) = opt_str(delta, "refusal")?.filter(|t| !t.is_empty()) {
            self.refused = true;
            self.text(t, out);
        }
        match delta.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(calls)) => {
                for call in calls {
                    self.tool_call_delta(call, out)?;
                }
            }
            Some(other) => {
                return Err(malformed(format!("`tool_calls` is not an array: {other}")));
            }
        }
        Ok(())
    }

    fn text(&mut self, t: &str, out: &mut Vec<StreamEvent>) {
        let index = self.text_block(TextKind::Text, out);
        self.output_chars += t.chars().count();
        out.push(StreamEvent::TextDelta {
            index,
            text: t.to_string(),
        });
    }

    /// The open block of `kind`, opening it (and closing another text-like one) if needed.
    fn text_block(&mut self, kind: TextKind, out: &mut Vec<StreamEvent>) -> usize {
        match self.open_text {
            Some((i, k)) if k == kind => return i,
            Some((i, _)) => {
                out.push(StreamEvent::BlockStop { index: i });
                self.open_text = None;
            }
            None => {}
        }
        let index = self.next_index;
        self.next_index += 1;
        let block = match kind {
            TextKind::Text => json!({"type": "text", "text": ""}),
            TextKind::Thinking => json!({"type": "thinking", "thinking": "", "signature": ""}),
        };
        out.push(StreamEvent::BlockStart { index, block });
        self.open_text = Some((index, kind));
        index
    }

    fn tool_call_delta(
        &mut self,
        call: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let oa_index = match call.get("index") {
            Some(i) => i
                .as_u64()
                .ok_or_else(|| malformed(format!("tool call `index` is not an integer: {i}")))?,
            // Some servers omit the index when they send one call per chunk, whole.
            None => self.tools.len() as u64,
        };
        let function = call.get("function").filter(|f| !f.is_null());
        let id = opt_str(call, "id")?.filter(|s| !s.is_empty());
        let name = match function {
            Some(f) => opt_str(f, "name")?.filter(|s| !s.is_empty()),
            None => None,
        };
        let args = match function.and_then(|f| f.get("arguments")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            // A few servers send the arguments as an object.
            Some(other @ Value::Object(_)) => Some(other.to_string()),
            Some(other) => {
                return Err(malformed(format!(
                    "tool call `arguments` is not a string: {other}"
                )));
            }
        };
        let slot = self.tools.entry(oa_index).or_default();
        if slot.closed {
            return Err(malformed(format!(
                "tool call {oa_index} continued after it ended"
            )));
        }
        if let Some(id) = id
            && slot.id.is_empty()
        {
            slot.id = id.to_string();
        }
        if let Some(name) = name {
            if slot.block.is_none() {
                slot.name.push_str(name);
            } else if slot.name != name {
                tracing::debug!(
                    index = oa_index,
                    "ignoring a repeated tool call name fragment"
                );
            }
        }
        if let Some(a) = &args {
            slot.args.push_str(a);
            slot.pending.push_str(a);
            self.output_chars += a.chars().count();
        }
        if slot.block.is_none() && !slot.name.is_empty() {
            // Close the text before the tool call so it streams as its own block.
            if let Some((i, _)) = self.open_text.take() {
                out.push(StreamEvent::BlockStop { index: i });
            }
            let slot = self.tools.entry(oa_index).or_default();
            if slot.id.is_empty() {
                slot.id = format!("call_runner_{oa_index}");
                tracing::debug!(index = oa_index, id = %slot.id, "tool call without an id; generated one");
            }
            let index = self.next_index;
            self.next_index += 1;
            slot.block = Some(index);
            out.push(StreamEvent::BlockStart {
                index,
                block: json!({"type": "tool_use", "id": slot.id, "name": slot.name, "input": {}}),
            });
        }
        let slot = self.tools.entry(oa_index).or_default();
        if let Some(index) = slot.block
            && !slot.pending.is_empty()
        {
            out.push(StreamEvent::InputJsonDelta {
                index,
                partial_json: std::mem::take(&mut slot.pending),
            });
        }
        Ok(())
    }

    fn finish(&mut self, reason: &str, out: &mut Vec<StreamEvent>) {
        self.finish_reason = Some(reason.to_string());
        self.close_blocks(reason == "length", out);
    }

    fn close_blocks(&mut self, truncated: bool, out: &mut Vec<StreamEvent>) {
        if self.finished_blocks {
            return;
        }
        self.finished_blocks = true;
        let mut stops: Vec<usize> = Vec::new();
        if let Some((i, _)) = self.open_text.take() {
            stops.push(i);
        }
        for (oa_index, slot) in &mut self.tools {
            slot.closed = true;
            let Some(index) = slot.block else {
                tracing::warn!(
                    index = oa_index,
                    "tool call without a function name; dropped"
                );
                continue;
            };
            let parses =
                slot.args.trim().is_empty() || serde_json::from_str::<Value>(&slot.args).is_ok();
            if truncated && !parses {
                tracing::debug!(
                    index = oa_index,
                    "tool call cut off by the length limit; dropped"
                );
                continue;
            }
            stops.push(index);
        }
        stops.sort_unstable();
        out.extend(
            stops
                .into_iter()
                .map(|index| StreamEvent::BlockStop { index }),
        );
    }

    /// End of the response (`[DONE]`, or EOF after `finish_reason`): close what is open and
    /// emit `MessageDelta` + `MessageStop`. Before any chunk this is `Incomplete`.
    pub fn done(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if !self.started {
            return Err(ProviderError::Incomplete { after_bytes: true });
        }
        self.close_blocks(false, out);
        let had_tools = self.tools.values().any(|s| s.block.is_some());
        let stop_reason = match self.finish_reason.as_deref() {
            _ if self.refused => StopReason::Refusal,
            Some(r) => map_finish_reason(r, had_tools),
            None => {
                tracing::warn!(
                    "stream ended with [DONE] but no finish_reason; assuming the turn ended"
                );
                if had_tools {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                }
            }
        };
        let usage = match (self.usage, self.estimate) {
            (Some(u), _) => u,
            (None, Some(est)) => Usage {
                input_tokens: est.prompt_chars.div_ceil(CHARS_PER_TOKEN) as u64,
                output_tokens: self.output_chars.div_ceil(CHARS_PER_TOKEN) as u64,
                ..Usage::default()
            },
            (None, None) => Usage::default(),
        };
        out.push(StreamEvent::MessageDelta {
            stop_reason: Some(stop_reason),
            stop_sequence: None,
            usage,
        });
        out.push(StreamEvent::MessageStop);
        Ok(())
    }

    /// Whether the response carried server-reported usage.
    pub fn has_usage(&self) -> bool {
        self.usage.is_some()
    }
}

/// Where [`event_stream`] is.
enum State {
    /// Reading chunks; events mapped but not yet yielded are queued.
    Reading(
        Box<SseEvents>,
        Box<ChunkMapper>,
        std::collections::VecDeque<StreamEvent>,
    ),
    /// Yielding the last queued events, then ending.
    Draining(std::collections::VecDeque<StreamEvent>),
    /// Ended.
    Done,
}

/// Turn a Chat Completions response body into provider-neutral events (see the module docs).
///
/// `on_estimate` is called once if the response carried no usage and estimated figures were
/// used instead.
pub fn event_stream<S, E>(
    bytes: S,
    idle_timeout: Duration,
    mapper: ChunkMapper,
    on_estimate: impl Fn() + Send + Sync + 'static,
) -> EventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: StdError + Send + Sync + 'static,
{
    let sse = Box::new(SseEvents::new(bytes, idle_timeout));
    let init = State::Reading(sse, Box::new(mapper), Default::default());
    let on_estimate = std::sync::Arc::new(on_estimate);
    let s = futures_util::stream::unfold(init, move |state| {
        let on_estimate = on_estimate.clone();
        async move {
            let (mut sse, mut mapper, mut q) = match state {
                State::Done => return None,
                State::Draining(mut q) => {
                    return q.pop_front().map(|ev| (Ok(ev), State::Draining(q)));
                }
                State::Reading(sse, mapper, q) => (sse, mapper, q),
            };
            loop {
                if let Some(ev) = q.pop_front() {
                    return Some((Ok(ev), State::Reading(sse, mapper, q)));
                }
                let mut out = Vec::new();
                let ended = match sse.next().await {
                    None if mapper.finished() => {
                        tracing::debug!("stream ended after finish_reason without [DONE]");
                        true
                    }
                    None => {
                        let after_bytes = sse.received_bytes();
                        tracing::debug!(after_bytes, "stream ended before finish_reason");
                        return Some((Err(ProviderError::Incomplete { after_bytes }), State::Done));
                    }
                    Some(Err(e)) => return Some((Err(e), State::Done)),
                    Some(Ok(raw)) => {
                        match mapper.push_sse(raw.event.as_deref(), raw.data.as_deref(), &mut out) {
                            Ok(done) => done,
                            // A chunk cut off by a dropped connection is the stream's
                            // last event (the SSE layer flushes it at EOF): that is an
                            // incomplete stream, not a malformed or corrupt one.
                            Err(
                                ProviderError::Malformed(m)
                                | ProviderError::Transport { message: m, .. },
                            ) if sse.next().await.is_none() => {
                                tracing::debug!(error = %m, "last chunk cut off at EOF");
                                let e = ProviderError::Incomplete { after_bytes: true };
                                return Some((Err(e), State::Done));
                            }
                            Err(e) => {
                                tracing::debug!(error = %e, "chunk rejected");
                                return Some((Err(e), State::Done));
                            }
                        }
                    }
                };
                q.extend(out);
                if ended {
                    let mut out = Vec::new();
                    if let Err(e) = mapper.done(&mut out) {
                        return Some((Err(e), State::Done));
                    }
                    if !mapper.has_usage() && mapper.estimate.is_some() {
                        on_estimate();
                    }
                    q.extend(out);
                    let first = q.pop_front()?;
                    return Some((Ok(first), State::Draining(q)));
                }
            }
        }
    });
    Box::pin(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[Value]) -> Vec<StreamEvent> {
        let mut m = ChunkMapper::new("m", Some(Estimate { prompt_chars: 40 }));
        let mut out = Vec::new();
        for c in chunks {
            m.push_chunk(c, &mut out).unwrap();
        }
        m.done(&mut out).unwrap();
        out
    }

    #[test]
    fn finish_reasons() {
        assert_eq!(map_finish_reason("tool_calls", true), StopReason::ToolUse);
        assert_eq!(map_finish_reason("stop", false), StopReason::EndTurn);
        assert_eq!(map_finish_reason("stop", true), StopReason::ToolUse);
        assert_eq!(map_finish_reason("length", false), StopReason::MaxTokens);
        assert_eq!(
            map_finish_reason("content_filter", false),
            StopReason::Refusal
        );
        assert_eq!(
            map_finish_reason("weird", false),
            StopReason::Other("weird".into())
        );
    }

    #[test]
    fn interleaved_tool_calls_get_their_own_blocks() {
        let tc = |i: u64, id: Option<&str>, name: Option<&str>, args: &str| {
            let mut f = json!({"arguments": args});
            if let Some(n) = name {
                f["name"] = json!(n);
            }
            let mut c = json!({"index": i, "function": f});
            if let Some(id) = id {
                c["id"] = json!(id);
            }
            json!({"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[c]}}]})
        };
        let ev = run(&[
            json!({"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}),
            tc(0, Some("a"), Some("Read"), ""),
            tc(1, Some("b"), Some("Glob"), "{\"pattern\""),
            tc(0, None, None, "{\"file_path\":\"x\"}"),
            tc(1, None, None, ":\"*\"}"),
            json!({"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
        ]);
        let stops: Vec<usize> = ev
            .iter()
            .filter_map(|e| match e {
                StreamEvent::BlockStop { index } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(stops, vec![0, 1, 2]);
        assert!(ev.contains(&StreamEvent::InputJsonDelta {
            index: 2,
            partial_json: ":\"*\"}".into()
        }));
        let Some(StreamEvent::MessageDelta {
            stop_reason, usage, ..
        }) = ev.iter().rev().nth(1)
        else {
            panic!("{ev:?}")
        };
        assert_eq!(stop_reason, &Some(StopReason::ToolUse));
        // Estimated: 40 chars in, 2 + 17 + 14 chars out.
        assert_eq!(usage.input_tokens, 10);
        assert_eq!(usage.output_tokens, 9);
    }

    #[test]
    fn length_drops_a_cut_off_tool_call() {
        let ev = run(&[
            json!({"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"Write","arguments":"{\"content\":\"ab"}}]}}]}),
            json!({"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}),
        ]);
        assert!(
            !ev.iter()
                .any(|e| matches!(e, StreamEvent::BlockStop { .. })),
            "{ev:?}"
        );
    }

    #[test]
    fn usage_with_cached_tokens_and_in_stream_error() {
        let u = parse_usage(Some(&json!({"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":60}})))
            .unwrap()
            .unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (40, 60, 7)
        );
        let mut m = ChunkMapper::new("m", None);
        let e = m
            .push_sse(
                None,
                Some(r#"{"error":{"message":"boom","type":"server_error"}}"#),
                &mut Vec::new(),
            )
            .unwrap_err();
        assert!(
            matches!(e, ProviderError::StreamError { ref error_type, .. } if error_type == "server_error"),
            "{e}"
        );
        assert!(m.push_sse(None, Some("[DONE]"), &mut Vec::new()).unwrap());
        // Not JSON: a corrupt stream (retried), not a protocol error.
        assert!(matches!(
            m.push_sse(None, Some("{not json"), &mut Vec::new()),
            Err(ProviderError::Transport { ref message, before_response: false })
                if message.starts_with("corrupt stream: ")
        ));
    }

    #[test]
    fn refusal_and_reasoning() {
        let ev = run(&[
            json!({"id":"c","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}),
            json!({"id":"c","model":"m","choices":[{"index":0,"delta":{"refusal":"I can't"}}]}),
            json!({"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
        ]);
        assert!(
            matches!(&ev[1], StreamEvent::BlockStart { index: 0, block } if block["type"] == "thinking")
        );
        assert!(ev.contains(&StreamEvent::BlockStop { index: 0 }));
        assert!(ev.contains(&StreamEvent::TextDelta {
            index: 1,
            text: "I can't".into()
        }));
        assert!(ev.iter().any(|e| matches!(
            e,
            StreamEvent::MessageDelta {
                stop_reason: Some(StopReason::Refusal),
                ..
            }
        )));
    }
}
