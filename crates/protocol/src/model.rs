//! Provider-neutral conversation types: messages, content blocks, usage and stop reasons.
//!
//! These are the shapes runner stores, writes to transcripts and sends to the Anthropic
//! Messages API (which they mirror). Other providers map to and from them.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A content block whose JSON form cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlockError {
    /// It has no string `type`.
    #[error("content block without a string `type`")]
    NoType,
    /// A field that holds text holds something else.
    #[error("`{block}` block field `{field}` is not a string: {value}")]
    NotAString {
        /// The block's `type`.
        block: String,
        /// The field.
        field: String,
        /// What it holds.
        value: Value,
    },
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user side: prompts and tool results.
    User,
    /// The model.
    Assistant,
}

/// One content block of a message.
///
/// Known block types are typed; anything else (server tool blocks, future types) is kept
/// verbatim in [`ContentBlock::Other`] so it can be sent back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// Plain text, optionally with citations.
    Text {
        /// The text.
        text: String,
        /// Citations attached by the API (kept verbatim), if any.
        citations: Option<Vec<Value>>,
    },
    /// Extended thinking; must be sent back unchanged with its signature.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the API attached.
        signature: String,
    },
    /// Redacted thinking; opaque data sent back unchanged.
    RedactedThinking {
        /// Opaque encrypted payload.
        data: String,
    },
    /// A tool call made by the model.
    ToolUse {
        /// Tool use id (`toolu_...`).
        id: String,
        /// Tool name.
        name: String,
        /// Parsed JSON input (an object).
        input: Value,
    },
    /// The result of a tool call, sent in a user message.
    ToolResult {
        /// The id of the tool_use this answers.
        tool_use_id: String,
        /// Text content for the model.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// A block type runner does not model; kept verbatim.
    Other(Value),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            citations: None,
        }
    }

    /// The block's `type` string as the API names it.
    pub fn type_name(&self) -> &str {
        match self {
            ContentBlock::Text { .. } => "text",
            ContentBlock::Thinking { .. } => "thinking",
            ContentBlock::RedactedThinking { .. } => "redacted_thinking",
            ContentBlock::ToolUse { .. } => "tool_use",
            ContentBlock::ToolResult { .. } => "tool_result",
            ContentBlock::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// The JSON form sent to the API and written to transcripts.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        match self {
            ContentBlock::Text { text, citations } => {
                m.insert("type".into(), "text".into());
                m.insert("text".into(), text.clone().into());
                if let Some(c) = citations {
                    m.insert("citations".into(), Value::Array(c.clone()));
                }
            }
            ContentBlock::Thinking {
                thinking,
                signature,
            } => {
                m.insert("type".into(), "thinking".into());
                m.insert("thinking".into(), thinking.clone().into());
                m.insert("signature".into(), signature.clone().into());
            }
            ContentBlock::RedactedThinking { data } => {
                m.insert("type".into(), "redacted_thinking".into());
                m.insert("data".into(), data.clone().into());
            }
            ContentBlock::ToolUse { id, name, input } => {
                m.insert("type".into(), "tool_use".into());
                m.insert("id".into(), id.clone().into());
                m.insert("name".into(), name.clone().into());
                m.insert("input".into(), input.clone());
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                m.insert("type".into(), "tool_result".into());
                m.insert("tool_use_id".into(), tool_use_id.clone().into());
                m.insert("content".into(), content.clone().into());
                if *is_error {
                    m.insert("is_error".into(), true.into());
                }
            }
            ContentBlock::Other(v) => return v.clone(),
        }
        Value::Object(m)
    }

    /// Parse a block from its JSON form. Unknown fields of known types are ignored
    /// (e.g. `caller` on tool_use), unknown types are kept verbatim.
    pub fn from_value(v: Value) -> Result<Self, BlockError> {
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .ok_or(BlockError::NoType)?;
        let s = |k: &str| -> Result<String, BlockError> {
            match v.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                None | Some(Value::Null) => Ok(String::new()),
                Some(other) => Err(BlockError::NotAString {
                    block: ty.to_string(),
                    field: k.to_string(),
                    value: other.clone(),
                }),
            }
        };
        Ok(match ty {
            "text" => ContentBlock::Text {
                text: s("text")?,
                citations: v.get("citations").and_then(Value::as_array).cloned(),
            },
            "thinking" => ContentBlock::Thinking {
                thinking: s("thinking")?,
                signature: s("signature")?,
            },
            "redacted_thinking" => ContentBlock::RedactedThinking { data: s("data")? },
            "tool_use" => ContentBlock::ToolUse {
                id: s("id")?,
                name: s("name")?,
                input: v
                    .get("input")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            },
            "tool_result" => ContentBlock::ToolResult {
                tool_use_id: s("tool_use_id")?,
                content: match v.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                },
                is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            },
            _ => ContentBlock::Other(v),
        })
    }
}

impl Serialize for ContentBlock {
    /// The same JSON as [`ContentBlock::to_value`] (same keys, same order), written straight
    /// from the fields: no intermediate `Value` tree.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_block(self, false, s)
    }
}

/// `{"type":"ephemeral"}`: an Anthropic prompt-cache breakpoint's `cache_control`.
pub struct Ephemeral;

impl Serialize for Ephemeral {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("type", "ephemeral")?;
        m.end()
    }
}

/// Serialize `block` as [`ContentBlock::to_value`] does; with `cache_control`, add
/// `"cache_control":{"type":"ephemeral"}` as the last key (an unknown block that is an object
/// has its own `cache_control` replaced; one that is not an object is written unchanged).
pub fn serialize_block<S: Serializer>(
    block: &ContentBlock,
    cache_control: bool,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let extra = usize::from(cache_control);
    let mut m = match block {
        ContentBlock::Text { text, citations } => {
            let mut m = s.serialize_map(Some(2 + usize::from(citations.is_some()) + extra))?;
            m.serialize_entry("type", "text")?;
            m.serialize_entry("text", text)?;
            if let Some(c) = citations {
                m.serialize_entry("citations", c)?;
            }
            m
        }
        ContentBlock::Thinking {
            thinking,
            signature,
        } => {
            let mut m = s.serialize_map(Some(3 + extra))?;
            m.serialize_entry("type", "thinking")?;
            m.serialize_entry("thinking", thinking)?;
            m.serialize_entry("signature", signature)?;
            m
        }
        ContentBlock::RedactedThinking { data } => {
            let mut m = s.serialize_map(Some(2 + extra))?;
            m.serialize_entry("type", "redacted_thinking")?;
            m.serialize_entry("data", data)?;
            m
        }
        ContentBlock::ToolUse { id, name, input } => {
            let mut m = s.serialize_map(Some(4 + extra))?;
            m.serialize_entry("type", "tool_use")?;
            m.serialize_entry("id", id)?;
            m.serialize_entry("name", name)?;
            m.serialize_entry("input", input)?;
            m
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let mut m = s.serialize_map(Some(3 + usize::from(*is_error) + extra))?;
            m.serialize_entry("type", "tool_result")?;
            m.serialize_entry("tool_use_id", tool_use_id)?;
            m.serialize_entry("content", content)?;
            if *is_error {
                m.serialize_entry("is_error", &true)?;
            }
            m
        }
        ContentBlock::Other(v) => match v {
            Value::Object(obj) if cache_control => {
                let mut m = s.serialize_map(Some(obj.len() + 1))?;
                for (k, val) in obj.iter().filter(|(k, _)| *k != "cache_control") {
                    m.serialize_entry(k, val)?;
                }
                m
            }
            _ => return v.serialize(s),
        },
    };
    if cache_control {
        m.serialize_entry("cache_control", &Ephemeral)?;
    }
    m.end()
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ContentBlock::from_value(v).map_err(D::Error::custom)
    }
}

/// One message of the conversation as runner stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its blocks, in order.
    pub content: Vec<ContentBlock>,
    /// The API message id for assistant messages (used to merge per-block records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
            id: None,
        }
    }

    /// All text blocks joined (no separator between blocks of one message beyond a newline).
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        parts.join("\n")
    }

    /// The tool_use blocks of this message.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// Token usage as the API reports it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct Usage {
    /// Uncached input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

/// The most tokens one response's usage field may count. Context windows hold a few million
/// tokens at most, so a server reporting more than this (2^32) is broken, and its usage is a
/// protocol error rather than a figure to add up ([`Usage::implausible`]).
pub const MAX_PLAUSIBLE_TOKENS: u64 = 1 << 32;

impl Usage {
    /// input + cache write + cache read + output: what `max_total_tokens` counts. Saturates
    /// (a sum that does not fit is `u64::MAX`, never a wrapped small number).
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
    }

    /// Add another usage to this one, saturating.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
    }

    /// The first field (name and value) beyond [`MAX_PLAUSIBLE_TOKENS`], if any.
    pub fn implausible(&self) -> Option<(&'static str, u64)> {
        [
            ("input_tokens", self.input_tokens),
            ("output_tokens", self.output_tokens),
            (
                "cache_creation_input_tokens",
                self.cache_creation_input_tokens,
            ),
            ("cache_read_input_tokens", self.cache_read_input_tokens),
        ]
        .into_iter()
        .find(|(_, n)| *n > MAX_PLAUSIBLE_TOKENS)
    }

    /// Merge a cumulative usage update (message_delta): fields present and non-zero win.
    pub fn merge_cumulative(&mut self, update: &Usage) {
        if update.input_tokens > 0 {
            self.input_tokens = update.input_tokens;
        }
        if update.output_tokens > 0 {
            self.output_tokens = update.output_tokens;
        }
        if update.cache_creation_input_tokens > 0 {
            self.cache_creation_input_tokens = update.cache_creation_input_tokens;
        }
        if update.cache_read_input_tokens > 0 {
            self.cache_read_input_tokens = update.cache_read_input_tokens;
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// Natural end.
    EndTurn,
    /// Output token cap reached.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The model wants tool results.
    ToolUse,
    /// Long-running server turn paused; resend to continue.
    PauseTurn,
    /// The model refused.
    Refusal,
    /// The context window is full.
    ModelContextWindowExceeded,
    /// Anything else, verbatim.
    Other(String),
}

impl StopReason {
    /// The API's string for this reason.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::ToolUse => "tool_use",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::ModelContextWindowExceeded => "model_context_window_exceeded",
            StopReason::Other(s) => s,
        }
    }

    /// Parse the API's string.
    pub fn parse(s: &str) -> Self {
        match s {
            "end_turn" => StopReason::EndTurn,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "tool_use" => StopReason::ToolUse,
            "pause_turn" => StopReason::PauseTurn,
            "refusal" => StopReason::Refusal,
            "model_context_window_exceeded" => StopReason::ModelContextWindowExceeded,
            other => StopReason::Other(other.to_string()),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(StopReason::parse(&s))
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: Value,
}

/// One request to a model provider (already normalized for the API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// Model id.
    pub model: String,
    /// System prompt.
    pub system: String,
    /// Conversation, normalized (alternating roles, tool results first).
    pub messages: Vec<Message>,
    /// Tools offered (shared: the same specs are offered on every turn of a task).
    #[serde(with = "shared_specs")]
    pub tools: std::sync::Arc<Vec<ToolSpec>>,
    /// Output token cap for this request.
    pub max_tokens: u32,
    /// Extended thinking configuration passed through verbatim (e.g. `{"type":"enabled","budget_tokens":N}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Value>,
}

/// Serde for [`ModelRequest::tools`]: a plain array of specs.
mod shared_specs {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::ToolSpec;

    pub(super) fn serialize<S: Serializer>(
        v: &Arc<Vec<ToolSpec>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        v.as_slice().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Arc<Vec<ToolSpec>>, D::Error> {
        Vec::<ToolSpec>::deserialize(d).map(Arc::new)
    }
}

/// A complete model response: one attempt that reached `message_stop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// API message id.
    pub id: String,
    /// Model that answered.
    pub model: String,
    /// Completed content blocks in index order.
    pub content: Vec<ContentBlock>,
    /// Stop reason from message_delta.
    pub stop_reason: Option<StopReason>,
    /// Matched stop sequence.
    pub stop_sequence: Option<String>,
    /// Final (cumulative) usage.
    pub usage: Usage,
    /// Request id from the response headers, when the provider has one.
    pub request_id: Option<String>,
    /// tool_use blocks whose input JSON did not parse: (tool_use_id, error). The block itself is
    /// in `content` with an empty object input; the loop answers it with an error result.
    pub invalid_tool_inputs: Vec<(String, String)>,
    /// Blocks that never got their `content_block_stop` (cut off); they are not in `content`
    /// and never run. (index, block type)
    pub dropped_blocks: Vec<(usize, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_use_drops_unrequested_fields() {
        let b = ContentBlock::from_value(json!({"type":"tool_use","id":"t","name":"Read","input":{"a":1},"caller":{"type":"direct"}})).unwrap();
        assert_eq!(
            b.to_value(),
            json!({"type":"tool_use","id":"t","name":"Read","input":{"a":1}})
        );
    }

    #[test]
    fn usage_arithmetic_saturates() {
        let huge = Usage {
            input_tokens: 2,
            output_tokens: u64::MAX,
            ..Usage::default()
        };
        assert_eq!(huge.total(), u64::MAX, "never wraps to a small number");
        let mut sum = huge;
        sum.add(&huge);
        assert_eq!((sum.input_tokens, sum.output_tokens), (4, u64::MAX));
        assert_eq!(huge.implausible(), Some(("output_tokens", u64::MAX)));
        let fine = Usage {
            input_tokens: 200_000,
            cache_read_input_tokens: MAX_PLAUSIBLE_TOKENS,
            ..Usage::default()
        };
        assert_eq!(fine.implausible(), None);
    }

    #[test]
    fn unknown_block_kept_verbatim() {
        let v = json!({"type":"server_tool_use","id":"s","name":"web_search","input":{}});
        let b = ContentBlock::from_value(v.clone()).unwrap();
        assert_eq!(b.to_value(), v);
    }

    #[test]
    fn thinking_roundtrips_with_signature() {
        let v = json!({"type":"thinking","thinking":"hm","signature":"sig=="});
        assert_eq!(ContentBlock::from_value(v.clone()).unwrap().to_value(), v);
    }
}
