//! Provider-neutral block assembler: [`StreamEvent`]s → completed blocks → [`ModelResponse`].
//!
//! Feed every event of one attempt to [`Assembler::push`]; it returns each block as its
//! `BlockStop` arrives (so callers can stream blocks live). [`Assembler::finish`] builds the
//! response once `MessageStop` was seen. A block still open at `MessageStop` makes the response
//! incomplete ([`ProviderError::UnclosedBlock`], retried like a cut stream), except when the
//! output was cut by a token limit (`max_tokens`, `model_context_window_exceeded`): such
//! blocks are left out of `content` and listed in `dropped_blocks`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::provider::{ProviderError, StreamEvent};
use super::types::{ContentBlock, MAX_PLAUSIBLE_TOKENS, ModelResponse, StopReason, Usage};

/// A block still receiving deltas.
#[derive(Debug)]
enum Partial {
    /// Text, with citations collected so far.
    Text {
        text: String,
        citations: Option<Vec<Value>>,
    },
    /// Thinking with its signature.
    Thinking { thinking: String, signature: String },
    /// Redacted thinking (arrives whole; no deltas expected).
    Redacted { data: String },
    /// A client tool call; `json` accumulates `partial_json`.
    ToolUse {
        id: String,
        name: String,
        start_input: Value,
        json: String,
    },
    /// Any other block type, kept verbatim; `json` accumulates `partial_json` for `input`.
    Other { value: Value, json: String },
}

impl Partial {
    /// The API type name, for messages and `dropped_blocks`.
    fn type_name(&self) -> String {
        match self {
            Partial::Text { .. } => "text".into(),
            Partial::Thinking { .. } => "thinking".into(),
            Partial::Redacted { .. } => "redacted_thinking".into(),
            Partial::ToolUse { .. } => "tool_use".into(),
            Partial::Other { value, .. } => value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string(),
        }
    }
}

/// Accumulates one attempt's events into a [`ModelResponse`].
#[derive(Debug, Default)]
pub struct Assembler {
    /// Message id and model from `MessageStart`.
    started: Option<(String, String)>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    stop_sequence: Option<String>,
    open: BTreeMap<usize, Partial>,
    done: BTreeMap<usize, ContentBlock>,
    invalid_tool_inputs: Vec<(String, String)>,
    stopped: bool,
    any_event: bool,
}

/// A string field of a block_start JSON: absent or null is empty, anything else an error.
fn str_field(block: &Value, ty: &str, key: &str, required: bool) -> Result<String, ProviderError> {
    match block.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) if !required => Ok(String::new()),
        None | Some(Value::Null) => Err(ProviderError::Malformed(format!(
            "content_block_start: `{ty}` block lacks string field `{key}`"
        ))),
        Some(other) => Err(ProviderError::Malformed(format!(
            "content_block_start: `{ty}` block field `{key}` is not a string: {other}"
        ))),
    }
}

fn malformed(msg: String) -> ProviderError {
    ProviderError::Malformed(msg)
}

/// `usage` as the server sent it in `event`, unless a count is beyond any plausible bound:
/// that is a protocol error (token budgets and costs cannot be computed from it).
fn plausible(event: &str, usage: Usage) -> Result<Usage, ProviderError> {
    match usage.implausible() {
        None => Ok(usage),
        Some((field, n)) => Err(malformed(format!(
            "{event}: usage.{field} is {n}, beyond any plausible token count \
             (at most {MAX_PLAUSIBLE_TOKENS}); the server's usage accounting is broken"
        ))),
    }
}

impl Assembler {
    /// An empty assembler for one attempt.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `MessageStop` has been seen.
    pub fn is_complete(&self) -> bool {
        self.stopped
    }

    /// Usage so far (message_start usage merged with message_delta updates).
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Message id and model once `MessageStart` was seen.
    pub fn message(&self) -> Option<(&str, &str)> {
        self.started
            .as_ref()
            .map(|(id, model)| (id.as_str(), model.as_str()))
    }

    /// Why the input of the completed tool_use block `tool_use_id` is unusable (it did not
    /// parse, or is not an object), if it is; the block itself then carries `{}`.
    pub fn invalid_input(&self, tool_use_id: &str) -> Option<&str> {
        self.invalid_tool_inputs
            .iter()
            .find(|(id, _)| id == tool_use_id)
            .map(|(_, e)| e.as_str())
    }

    /// Apply one event. Returns `(index, block)` when a `BlockStop` completes a block.
    pub fn push(
        &mut self,
        ev: StreamEvent,
    ) -> Result<Option<(usize, ContentBlock)>, ProviderError> {
        if matches!(ev, StreamEvent::Ping) {
            return Ok(None);
        }
        if self.stopped {
            return Err(malformed(format!(
                "event after message_stop: {}",
                event_name(&ev)
            )));
        }
        let first = !self.any_event;
        self.any_event = true;
        match ev {
            StreamEvent::MessageStart { id, model, usage } => {
                if !first || self.started.is_some() {
                    return Err(malformed("message_start after other events".into()));
                }
                self.usage = plausible("message_start", usage)?;
                self.started = Some((id, model));
                Ok(None)
            }
            other if self.started.is_none() => Err(malformed(format!(
                "{} before message_start",
                event_name(&other)
            ))),
            StreamEvent::BlockStart { index, block } => {
                self.block_start(index, block)?;
                Ok(None)
            }
            StreamEvent::TextDelta { index, text } => match self.open_block(index, "text_delta")? {
                Partial::Text { text: t, .. } => {
                    t.push_str(&text);
                    Ok(None)
                }
                p => Err(wrong_kind("text_delta", index, p)),
            },
            StreamEvent::CitationDelta { index, citation } => {
                match self.open_block(index, "citations_delta")? {
                    Partial::Text { citations, .. } => {
                        citations.get_or_insert_with(Vec::new).push(citation);
                        Ok(None)
                    }
                    p => Err(wrong_kind("citations_delta", index, p)),
                }
            }
            StreamEvent::ThinkingDelta { index, thinking } => {
                match self.open_block(index, "thinking_delta")? {
                    Partial::Thinking { thinking: t, .. } => {
                        t.push_str(&thinking);
                        Ok(None)
                    }
                    p => Err(wrong_kind("thinking_delta", index, p)),
                }
            }
            StreamEvent::SignatureDelta { index, signature } => {
                match self.open_block(index, "signature_delta")? {
                    Partial::Thinking { signature: s, .. } => {
                        s.push_str(&signature);
                        Ok(None)
                    }
                    p => Err(wrong_kind("signature_delta", index, p)),
                }
            }
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => match self.open_block(index, "input_json_delta")? {
                Partial::ToolUse { json, .. } | Partial::Other { json, .. } => {
                    json.push_str(&partial_json);
                    Ok(None)
                }
                p => Err(wrong_kind("input_json_delta", index, p)),
            },
            StreamEvent::BlockStop { index } => {
                let partial = self.open.remove(&index).ok_or_else(|| {
                    malformed(format!(
                        "content_block_stop for unknown or finished block index {index}"
                    ))
                })?;
                let block = self.complete(partial);
                self.done.insert(index, block.clone());
                Ok(Some((index, block)))
            }
            StreamEvent::MessageDelta {
                stop_reason,
                stop_sequence,
                usage,
            } => {
                let usage = plausible("message_delta", usage)?;
                if stop_reason.is_some() {
                    self.stop_reason = stop_reason;
                }
                if stop_sequence.is_some() {
                    self.stop_sequence = stop_sequence;
                }
                self.usage.merge_cumulative(&usage);
                Ok(None)
            }
            StreamEvent::MessageStop => {
                self.stopped = true;
                Ok(None)
            }
            // Handled above; kept for exhaustiveness.
            StreamEvent::Ping => Ok(None),
        }
    }

    fn open_block(&mut self, index: usize, what: &str) -> Result<&mut Partial, ProviderError> {
        self.open.get_mut(&index).ok_or_else(|| {
            malformed(format!(
                "{what} for unknown or finished block index {index}"
            ))
        })
    }

    fn block_start(&mut self, index: usize, block: Value) -> Result<(), ProviderError> {
        if self.open.contains_key(&index) || self.done.contains_key(&index) {
            return Err(malformed(format!(
                "content_block_start for index {index}, which was already started"
            )));
        }
        let ty = block
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("content_block_start: block without a string `type`".into()))?
            .to_string();
        let partial = match ty.as_str() {
            "text" => Partial::Text {
                text: str_field(&block, "text", "text", false)?,
                citations: block.get("citations").and_then(Value::as_array).cloned(),
            },
            "thinking" => Partial::Thinking {
                thinking: str_field(&block, "thinking", "thinking", false)?,
                signature: str_field(&block, "thinking", "signature", false)?,
            },
            "redacted_thinking" => Partial::Redacted {
                data: str_field(&block, "redacted_thinking", "data", true)?,
            },
            "tool_use" => Partial::ToolUse {
                id: str_field(&block, "tool_use", "id", true)?,
                name: str_field(&block, "tool_use", "name", true)?,
                start_input: block.get("input").cloned().unwrap_or(Value::Null),
                json: String::new(),
            },
            _ => Partial::Other {
                value: block,
                json: String::new(),
            },
        };
        self.open.insert(index, partial);
        Ok(())
    }

    /// Turn a finished partial into its block, recording unparsable tool input.
    fn complete(&mut self, partial: Partial) -> ContentBlock {
        match partial {
            Partial::Text { text, citations } => ContentBlock::Text { text, citations },
            Partial::Thinking {
                thinking,
                signature,
            } => ContentBlock::Thinking {
                thinking,
                signature,
            },
            Partial::Redacted { data } => ContentBlock::RedactedThinking { data },
            Partial::ToolUse {
                id,
                name,
                start_input,
                json,
            } => {
                let input = if json.trim().is_empty() {
                    match start_input {
                        Value::Object(m) => Value::Object(m),
                        _ => Value::Object(Map::new()),
                    }
                } else {
                    match serde_json::from_str::<Value>(&json) {
                        Ok(Value::Object(m)) => Value::Object(m),
                        Ok(other) => {
                            let kind = json_kind(&other);
                            self.invalid_tool_inputs
                                .push((id.clone(), format!("tool input is {kind}, not an object")));
                            Value::Object(Map::new())
                        }
                        Err(e) => {
                            self.invalid_tool_inputs
                                .push((id.clone(), format!("tool input is not valid JSON: {e}")));
                            Value::Object(Map::new())
                        }
                    }
                };
                ContentBlock::ToolUse { id, name, input }
            }
            Partial::Other { mut value, json } => {
                if !json.trim().is_empty() {
                    match serde_json::from_str::<Value>(&json) {
                        Ok(input) => {
                            if let Value::Object(m) = &mut value {
                                m.insert("input".into(), input);
                            }
                        }
                        Err(e) => {
                            let ty = value.get("type").and_then(Value::as_str).unwrap_or("?");
                            tracing::warn!(
                                block_type = ty,
                                error = %e,
                                "input JSON of a server block does not parse; keeping its start input"
                            );
                        }
                    }
                }
                ContentBlock::Other(value)
            }
        }
    }

    /// The response, once `MessageStop` was seen; otherwise [`ProviderError::Incomplete`].
    pub fn finish(self, request_id: Option<String>) -> Result<ModelResponse, ProviderError> {
        if !self.stopped {
            return Err(ProviderError::Incomplete {
                after_bytes: self.any_event,
            });
        }
        let Some((id, model)) = self.started else {
            return Err(malformed("message_stop without message_start".into()));
        };
        let cut_by_limit = matches!(
            self.stop_reason,
            Some(StopReason::MaxTokens | StopReason::ModelContextWindowExceeded)
        );
        if !cut_by_limit && let Some((index, partial)) = self.open.iter().next() {
            tracing::debug!(index, block_type = %partial.type_name(), "message_stop with a block still open");
            return Err(ProviderError::UnclosedBlock {
                index: *index,
                block_type: partial.type_name(),
            });
        }
        let dropped_blocks: Vec<(usize, String)> =
            self.open.iter().map(|(i, p)| (*i, p.type_name())).collect();
        for (index, ty) in &dropped_blocks {
            tracing::warn!(index, block_type = %ty, "content block cut off without content_block_stop; dropped");
        }
        Ok(ModelResponse {
            id,
            model,
            content: self.done.into_values().collect(),
            stop_reason: self.stop_reason,
            stop_sequence: self.stop_sequence,
            usage: self.usage,
            request_id,
            invalid_tool_inputs: self.invalid_tool_inputs,
            dropped_blocks,
        })
    }
}

fn wrong_kind(delta: &str, index: usize, p: &Partial) -> ProviderError {
    malformed(format!(
        "{delta} for block index {index}, which is a `{}` block",
        p.type_name()
    ))
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The wire name of an event, for error messages.
fn event_name(ev: &StreamEvent) -> &'static str {
    match ev {
        StreamEvent::MessageStart { .. } => "message_start",
        StreamEvent::BlockStart { .. } => "content_block_start",
        StreamEvent::TextDelta { .. } => "text_delta",
        StreamEvent::ThinkingDelta { .. } => "thinking_delta",
        StreamEvent::SignatureDelta { .. } => "signature_delta",
        StreamEvent::InputJsonDelta { .. } => "input_json_delta",
        StreamEvent::CitationDelta { .. } => "citations_delta",
        StreamEvent::BlockStop { .. } => "content_block_stop",
        StreamEvent::MessageDelta { .. } => "message_delta",
        StreamEvent::MessageStop => "message_stop",
        StreamEvent::Ping => "ping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start() -> StreamEvent {
        StreamEvent::MessageStart {
            id: "msg_1".into(),
            model: "m".into(),
            usage: Usage {
                input_tokens: 10,
                output_tokens: 1,
                ..Usage::default()
            },
        }
    }

    fn tool_start(index: usize, id: &str) -> StreamEvent {
        StreamEvent::BlockStart {
            index,
            block: json!({"type":"tool_use","id":id,"name":"Bash","input":{}}),
        }
    }

    fn json_delta(index: usize, s: &str) -> StreamEvent {
        StreamEvent::InputJsonDelta {
            index,
            partial_json: s.into(),
        }
    }

    fn run(events: Vec<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let mut a = Assembler::new();
        for e in events {
            a.push(e)?;
        }
        a.finish(Some("req_1".into()))
    }

    #[test]
    fn text_and_tool_use_in_index_order_with_cumulative_usage() {
        let r = run(vec![
            start(),
            StreamEvent::BlockStart {
                index: 0,
                block: json!({"type":"text","text":""}),
            },
            StreamEvent::TextDelta {
                index: 0,
                text: "Hi ".into(),
            },
            StreamEvent::Ping,
            StreamEvent::TextDelta {
                index: 0,
                text: "there".into(),
            },
            StreamEvent::BlockStop { index: 0 },
            tool_start(1, "toolu_1"),
            json_delta(1, ""),
            json_delta(1, "{\"command\":"),
            json_delta(1, " \"ls\"}"),
            StreamEvent::BlockStop { index: 1 },
            StreamEvent::MessageDelta {
                stop_reason: Some(StopReason::ToolUse),
                stop_sequence: None,
                usage: Usage {
                    output_tokens: 42,
                    ..Usage::default()
                },
            },
            StreamEvent::MessageStop,
        ])
        .unwrap();
        assert_eq!(r.id, "msg_1");
        assert_eq!(r.request_id.as_deref(), Some("req_1"));
        assert_eq!(
            r.content,
            vec![
                ContentBlock::text("Hi there"),
                ContentBlock::ToolUse {
                    id: "toolu_1".into(),
                    name: "Bash".into(),
                    input: json!({"command":"ls"})
                }
            ]
        );
        assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(r.usage.input_tokens, 10);
        assert_eq!(r.usage.output_tokens, 42);
        assert!(r.invalid_tool_inputs.is_empty());
        assert!(r.dropped_blocks.is_empty());
    }

    #[test]
    fn push_returns_block_on_stop() {
        let mut a = Assembler::new();
        assert_eq!(a.push(start()).unwrap(), None);
        a.push(tool_start(0, "t")).unwrap();
        let got = a.push(StreamEvent::BlockStop { index: 0 }).unwrap();
        assert_eq!(
            got,
            Some((
                0,
                ContentBlock::ToolUse {
                    id: "t".into(),
                    name: "Bash".into(),
                    input: json!({})
                }
            ))
        );
    }

    #[test]
    fn unparsable_tool_input_is_recorded_and_block_kept() {
        let r = run(vec![
            start(),
            tool_start(0, "bad"),
            json_delta(0, "{\"a\": tru"),
            StreamEvent::BlockStop { index: 0 },
            tool_start(1, "arr"),
            json_delta(1, "[1,2]"),
            StreamEvent::BlockStop { index: 1 },
            StreamEvent::MessageStop,
        ])
        .unwrap();
        assert_eq!(r.content.len(), 2);
        for b in &r.content {
            let ContentBlock::ToolUse { input, .. } = b else {
                panic!("{b:?}")
            };
            assert_eq!(input, &json!({}));
        }
        assert_eq!(r.invalid_tool_inputs.len(), 2);
        assert_eq!(r.invalid_tool_inputs[0].0, "bad");
        assert!(r.invalid_tool_inputs[0].1.contains("not valid JSON"));
        assert_eq!(r.invalid_tool_inputs[1].0, "arr");
        assert!(r.invalid_tool_inputs[1].1.contains("an array"));
    }

    #[test]
    fn unfinished_block_is_dropped_not_in_content() {
        let r = run(vec![
            start(),
            StreamEvent::BlockStart {
                index: 0,
                block: json!({"type":"text","text":""}),
            },
            StreamEvent::BlockStop { index: 0 },
            tool_start(1, "cut"),
            json_delta(1, "{\"a\":"),
            StreamEvent::MessageDelta {
                stop_reason: Some(StopReason::MaxTokens),
                stop_sequence: None,
                usage: Usage::default(),
            },
            StreamEvent::MessageStop,
        ])
        .unwrap();
        assert_eq!(r.content, vec![ContentBlock::text("")]);
        assert_eq!(r.dropped_blocks, vec![(1, "tool_use".to_string())]);
        assert_eq!(r.stop_reason, Some(StopReason::MaxTokens));
    }

    #[test]
    fn a_block_left_open_without_a_token_limit_is_incomplete() {
        // The server ends the message while the tool call is still streaming: the call must
        // not vanish (the run would end `success` with nothing done); the attempt is retried.
        for stop in [Some(StopReason::ToolUse), Some(StopReason::EndTurn), None] {
            let err = run(vec![
                start(),
                StreamEvent::BlockStart {
                    index: 0,
                    block: json!({"type":"text","text":""}),
                },
                StreamEvent::BlockStop { index: 0 },
                tool_start(1, "toolu_cut"),
                json_delta(1, "{\"command\":\"ls\"}"),
                StreamEvent::MessageDelta {
                    stop_reason: stop.clone(),
                    stop_sequence: None,
                    usage: Usage::default(),
                },
                StreamEvent::MessageStop,
            ])
            .unwrap_err();
            match err {
                ProviderError::UnclosedBlock { index, block_type } => {
                    assert_eq!((index, block_type.as_str()), (1, "tool_use"), "{stop:?}")
                }
                other => panic!("{stop:?}: {other:?}"),
            }
        }
        // An open text block is no different.
        let err = run(vec![
            start(),
            StreamEvent::BlockStart {
                index: 0,
                block: json!({"type":"text","text":""}),
            },
            StreamEvent::MessageStop,
        ])
        .unwrap_err();
        assert!(
            matches!(err, ProviderError::UnclosedBlock { index: 0, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn thinking_signature_citations_and_server_blocks() {
        let r = run(vec![
            start(),
            StreamEvent::BlockStart {
                index: 0,
                block: json!({"type":"thinking","thinking":"","signature":""}),
            },
            StreamEvent::ThinkingDelta {
                index: 0,
                thinking: "hm".into(),
            },
            StreamEvent::SignatureDelta {
                index: 0,
                signature: "sig==".into(),
            },
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::BlockStart {
                index: 1,
                block: json!({"type":"server_tool_use","id":"s","name":"web_search","input":{}}),
            },
            json_delta(1, "{\"query\":\"q\"}"),
            StreamEvent::BlockStop { index: 1 },
            StreamEvent::BlockStart {
                index: 2,
                block: json!({"type":"text","text":"","citations":[]}),
            },
            StreamEvent::CitationDelta {
                index: 2,
                citation: json!({"type":"web_search_result_location","url":"u"}),
            },
            StreamEvent::TextDelta {
                index: 2,
                text: "cited".into(),
            },
            StreamEvent::BlockStop { index: 2 },
            StreamEvent::BlockStart {
                index: 3,
                block: json!({"type":"redacted_thinking","data":"opaque"}),
            },
            StreamEvent::BlockStop { index: 3 },
            StreamEvent::MessageStop,
        ])
        .unwrap();
        assert_eq!(
            r.content,
            vec![
                ContentBlock::Thinking {
                    thinking: "hm".into(),
                    signature: "sig==".into()
                },
                ContentBlock::Other(
                    json!({"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"q"}})
                ),
                ContentBlock::Text {
                    text: "cited".into(),
                    citations: Some(vec![json!({"type":"web_search_result_location","url":"u"})])
                },
                ContentBlock::RedactedThinking {
                    data: "opaque".into()
                },
            ]
        );
    }

    fn expect_malformed(events: Vec<StreamEvent>, needle: &str) {
        let mut a = Assembler::new();
        for e in events {
            if let Err(err) = a.push(e) {
                let ProviderError::Malformed(msg) = &err else {
                    panic!("expected Malformed, got {err:?}")
                };
                assert!(msg.contains(needle), "{msg} lacks {needle}");
                return;
            }
        }
        panic!("no error for {needle}");
    }

    #[test]
    fn protocol_violations_are_malformed() {
        expect_malformed(
            vec![
                start(),
                StreamEvent::TextDelta {
                    index: 3,
                    text: "x".into(),
                },
            ],
            "unknown or finished block index 3",
        );
        expect_malformed(
            vec![
                start(),
                tool_start(0, "t"),
                StreamEvent::TextDelta {
                    index: 0,
                    text: "x".into(),
                },
            ],
            "`tool_use` block",
        );
        expect_malformed(
            vec![
                start(),
                tool_start(0, "t"),
                StreamEvent::BlockStop { index: 0 },
                json_delta(0, "{}"),
            ],
            "unknown or finished",
        );
        expect_malformed(
            vec![start(), tool_start(0, "a"), tool_start(0, "b")],
            "already started",
        );
        expect_malformed(
            vec![StreamEvent::BlockStop { index: 0 }],
            "before message_start",
        );
        expect_malformed(
            vec![
                start(),
                StreamEvent::BlockStart {
                    index: 0,
                    block: json!({"type":"tool_use","name":"x"}),
                },
            ],
            "lacks string field `id`",
        );
        expect_malformed(
            vec![start(), StreamEvent::MessageStop, StreamEvent::MessageStop],
            "after message_stop",
        );
    }

    #[test]
    fn implausible_usage_is_a_protocol_error() {
        let huge = Usage {
            output_tokens: u64::MAX,
            ..Usage::default()
        };
        expect_malformed(
            vec![
                start(),
                StreamEvent::MessageDelta {
                    stop_reason: Some(StopReason::EndTurn),
                    stop_sequence: None,
                    usage: huge,
                },
            ],
            "message_delta: usage.output_tokens is 18446744073709551615, beyond any plausible",
        );
        expect_malformed(
            vec![StreamEvent::MessageStart {
                id: "m".into(),
                model: "m".into(),
                usage: Usage {
                    cache_read_input_tokens: MAX_PLAUSIBLE_TOKENS + 1,
                    ..Usage::default()
                },
            }],
            "message_start: usage.cache_read_input_tokens",
        );
    }

    #[test]
    fn finish_without_message_stop_is_incomplete() {
        let mut a = Assembler::new();
        assert!(matches!(
            Assembler::new().finish(None),
            Err(ProviderError::Incomplete { after_bytes: false })
        ));
        a.push(start()).unwrap();
        assert!(matches!(
            a.finish(None),
            Err(ProviderError::Incomplete { after_bytes: true })
        ));
    }
}
