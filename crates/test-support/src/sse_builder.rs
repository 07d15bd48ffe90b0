//! Builders for Anthropic Messages SSE streams and error responses.
//!
//! [`Resp`] builds a whole streamed response the way the real API frames it: `message_start`,
//! per block `content_block_start` / deltas / `content_block_stop`, `message_delta` with the
//! stop reason and cumulative usage, `message_stop`. Text is split into several `text_delta`s
//! and tool input JSON into several `input_json_delta` fragments, the first one empty.

use serde_json::{Value, json};

use crate::mock_turn::MockTurn;
pub use crate::sse::{SseEvent, parse_sse, render_sse};

/// A `ping` event, as the API sends it.
pub fn ping() -> SseEvent {
    SseEvent::new("ping", &json!({"type": "ping"}))
}

/// An `event: error` as the API sends mid-stream after HTTP 200,
/// e.g. `error_event("overloaded_error", "Overloaded")`.
pub fn error_event(error_type: &str, message: &str) -> SseEvent {
    SseEvent::new(
        "error",
        &json!({"type": "error", "error": {"type": error_type, "message": message}}),
    )
}

/// Split `s` into at most `parts` non-empty pieces on char boundaries.
fn split_pieces(s: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = parts.clamp(1, chars.len());
    let size = chars.len().div_ceil(n);
    chars
        .chunks(size)
        .map(|c| c.iter().collect::<String>())
        .collect()
}

#[derive(Debug, Clone)]
enum Item {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    /// A tool_use whose input streams as exactly these fragments (valid JSON or not).
    ToolUseFragments {
        id: String,
        name: String,
        fragments: Vec<String>,
    },
    Ping,
}

/// Builder for one complete streamed response. See the module docs.
///
/// ```ignore
/// let events = Resp::new().text("Looking").tool_use("toolu_1", "Read", json!({"file_path": "/x"})).build();
/// ```
#[derive(Debug, Clone)]
pub struct Resp {
    id: String,
    model: String,
    items: Vec<Item>,
    stop: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    cache_creation: u64,
    cache_read: u64,
    finish: bool,
    /// Index of the item whose `content_block_stop` is left out.
    cut: Option<usize>,
}

impl Default for Resp {
    fn default() -> Self {
        Self::new()
    }
}

impl Resp {
    /// An empty response: id `msg_mock_1`, model `claude-mock`, usage 10 in / 5 out.
    pub fn new() -> Self {
        Resp {
            id: "msg_mock_1".into(),
            model: "claude-mock".into(),
            items: Vec::new(),
            stop: None,
            input_tokens: 10,
            output_tokens: 5,
            cache_creation: 0,
            cache_read: 0,
            finish: true,
            cut: None,
        }
    }

    /// Set the message id.
    pub fn id(mut self, id: &str) -> Self {
        self.id = id.into();
        self
    }

    /// Set the model name reported in `message_start`.
    pub fn model(mut self, model: &str) -> Self {
        self.model = model.into();
        self
    }

    /// Append a text block (streamed as a few `text_delta`s).
    pub fn text(mut self, text: &str) -> Self {
        self.items.push(Item::Text(text.into()));
        self
    }

    /// Append a tool_use block (input streamed as `input_json_delta` fragments, first empty).
    pub fn tool_use(mut self, id: &str, name: &str, input: Value) -> Self {
        self.items.push(Item::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        });
        self
    }

    /// Append a tool_use block whose input streams as exactly `fragments` (e.g. JSON that
    /// does not parse).
    pub fn tool_use_fragments(mut self, id: &str, name: &str, fragments: &[&str]) -> Self {
        self.items.push(Item::ToolUseFragments {
            id: id.into(),
            name: name.into(),
            fragments: fragments.iter().map(|f| f.to_string()).collect(),
        });
        self
    }

    /// Leave out the last block's `content_block_stop` (a block the output cap cut off).
    pub fn cut_off(mut self) -> Self {
        self.cut = self.items.len().checked_sub(1);
        self
    }

    /// Append a thinking block (`thinking_delta`s, then one `signature_delta`).
    pub fn thinking(mut self, thinking: &str, signature: &str) -> Self {
        self.items.push(Item::Thinking {
            thinking: thinking.into(),
            signature: signature.into(),
        });
        self
    }

    /// Append a redacted_thinking block (start with its data, then stop).
    pub fn redacted_thinking(mut self, data: &str) -> Self {
        self.items.push(Item::RedactedThinking(data.into()));
        self
    }

    /// Insert a `ping` event at this point of the stream.
    pub fn ping(mut self) -> Self {
        self.items.push(Item::Ping);
        self
    }

    /// Set the stop reason (`end_turn`, `tool_use`, `max_tokens`, `refusal`, ...). Default:
    /// `tool_use` if the response has a tool_use block, else `end_turn`.
    pub fn stop(mut self, reason: &str) -> Self {
        self.stop = Some(reason.into());
        self
    }

    /// Set input and (final, cumulative) output tokens.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.input_tokens = input;
        self.output_tokens = output;
        self
    }

    /// Set prompt-cache token counts (creation, read).
    pub fn cache(mut self, creation: u64, read: u64) -> Self {
        self.cache_creation = creation;
        self.cache_read = read;
        self
    }

    /// Omit `message_delta` and `message_stop` (a stream that ends after the last block).
    pub fn unfinished(mut self) -> Self {
        self.finish = false;
        self
    }

    /// The stop reason this response will report.
    pub fn stop_reason(&self) -> String {
        self.stop.clone().unwrap_or_else(|| {
            if self
                .items
                .iter()
                .any(|i| matches!(i, Item::ToolUse { .. } | Item::ToolUseFragments { .. }))
            {
                "tool_use".into()
            } else {
                "end_turn".into()
            }
        })
    }

    /// The events of the whole response.
    pub fn build(self) -> Vec<SseEvent> {
        let mut ev = Vec::new();
        let usage_start = json!({
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation,
            "cache_read_input_tokens": self.cache_read,
            "output_tokens": 1,
        });
        ev.push(SseEvent::new(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": self.id, "type": "message", "role": "assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage_start,
            }}),
        ));
        let start = |index: usize, block: Value| {
            SseEvent::new(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": block}),
            )
        };
        let delta = |index: usize, delta: Value| {
            SseEvent::new(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let stop = |index: usize| {
            SseEvent::new(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            )
        };
        let stop_reason = self.stop_reason();
        let mut index = 0;
        for (k, item) in self.items.iter().enumerate() {
            match item {
                Item::Ping => {
                    ev.push(ping());
                    continue;
                }
                Item::Text(text) => {
                    ev.push(start(index, json!({"type": "text", "text": ""})));
                    for piece in split_pieces(text, 3) {
                        ev.push(delta(index, json!({"type": "text_delta", "text": piece})));
                    }
                }
                Item::ToolUse { id, name, input } => {
                    ev.push(start(
                        index,
                        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    ));
                    ev.push(delta(
                        index,
                        json!({"type": "input_json_delta", "partial_json": ""}),
                    ));
                    for piece in split_pieces(&input.to_string(), 4) {
                        ev.push(delta(
                            index,
                            json!({"type": "input_json_delta", "partial_json": piece}),
                        ));
                    }
                }
                Item::Thinking {
                    thinking,
                    signature,
                } => {
                    ev.push(start(index, json!({"type": "thinking", "thinking": ""})));
                    for piece in split_pieces(thinking, 3) {
                        ev.push(delta(
                            index,
                            json!({"type": "thinking_delta", "thinking": piece}),
                        ));
                    }
                    ev.push(delta(
                        index,
                        json!({"type": "signature_delta", "signature": signature}),
                    ));
                }
                Item::ToolUseFragments {
                    id,
                    name,
                    fragments,
                } => {
                    ev.push(start(
                        index,
                        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    ));
                    for piece in fragments {
                        ev.push(delta(
                            index,
                            json!({"type": "input_json_delta", "partial_json": piece}),
                        ));
                    }
                }
                Item::RedactedThinking(data) => {
                    ev.push(start(
                        index,
                        json!({"type": "redacted_thinking", "data": data}),
                    ));
                }
            }
            if self.cut != Some(k) {
                ev.push(stop(index));
            }
            index += 1;
        }
        if self.finish {
            ev.push(SseEvent::new(
                "message_delta",
                &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {
                    "input_tokens": self.input_tokens,
                    "cache_creation_input_tokens": self.cache_creation,
                    "cache_read_input_tokens": self.cache_read,
                    "output_tokens": self.output_tokens,
                }}),
            ));
            ev.push(SseEvent::new(
                "message_stop",
                &json!({"type": "message_stop"}),
            ));
        }
        ev
    }

    /// The response as a well-framed SSE turn.
    pub fn turn(self) -> MockTurn {
        MockTurn::Sse(self.build())
    }
}

/// A turn answering with one text block and `end_turn`.
pub fn text_turn(text: &str) -> MockTurn {
    Resp::new().text(text).turn()
}

/// A turn answering with one tool_use block and `tool_use`.
pub fn tool_turn(id: &str, name: &str, input: Value) -> MockTurn {
    Resp::new().tool_use(id, name, input).turn()
}

/// The real error body (from `tests/fixtures/errors/`) for `status`.
/// Known: 400, 401, 403, 404, 413, 429, 500, 529. Panics on others.
pub fn error_body(status: u16) -> &'static str {
    match status {
        400 => include_str!("../../../tests/fixtures/errors/400_invalid_request_error.json"),
        401 => include_str!("../../../tests/fixtures/errors/401_authentication_error.json"),
        403 => include_str!("../../../tests/fixtures/errors/403_permission_error.json"),
        404 => include_str!("../../../tests/fixtures/errors/404_not_found_error.json"),
        413 => include_str!("../../../tests/fixtures/errors/413_request_too_large.json"),
        429 => include_str!("../../../tests/fixtures/errors/429_rate_limit_error_account.json"),
        500 => include_str!("../../../tests/fixtures/errors/500_api_error.json"),
        529 => include_str!("../../../tests/fixtures/errors/529_overloaded_error.json"),
        other => panic!("error_body: no recorded error body for HTTP {other}"),
    }
}

/// An HTTP error turn with Anthropic's real body for `status` (see [`error_body`]), a
/// `content-type: application/json` header, and a `request-id` header matching the body's
/// `request_id` when it has one. 429 also gets `retry-after: 0` (the real API sends seconds;
/// 0 keeps tests fast — override with [`MockTurn::with_header`], drop with
/// [`MockTurn::without_header`]).
pub fn http_error(status: u16) -> MockTurn {
    let body = error_body(status).trim().to_string();
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(rid) = serde_json::from_str::<Value>(&body).ok().and_then(|v| {
        v.get("request_id")
            .and_then(Value::as_str)
            .map(String::from)
    }) {
        headers.push(("request-id".into(), rid));
    }
    if status == 429 {
        headers.push(("retry-after".into(), "0".into()));
    }
    MockTurn::Http {
        status,
        body,
        headers,
    }
}
