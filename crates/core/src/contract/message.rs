//! The message parts the transcript and stream-json both carry: user and assistant messages in
//! the Anthropic Messages API shape, and token usage.
//!
//! Content blocks themselves are [`ContentBlock`]s, serialized by their own `Serialize`
//! (the API's shape); a message holds them by reference.

use schemars::JsonSchema;
use serde::Serialize;

use crate::events::AssistantMeta;
use crate::model::{ContentBlock, Role, Usage};

/// A user message: `{"role":"user","content":...}`.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UserMessage<'a> {
    /// Always [`Role::User`].
    pub role: Role,
    /// What the user side said.
    pub content: UserContent<'a>,
}

/// The `content` of a [`UserMessage`].
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum UserContent<'a> {
    /// Plain text (the prompt, feedback, a compact summary), written as a JSON string.
    Text(&'a str),
    /// Content blocks (a tool result), written as an array.
    Blocks(&'a [ContentBlock]),
}

impl<'a> UserMessage<'a> {
    /// A message whose content is the string `text`.
    pub fn text(text: &'a str) -> Self {
        UserMessage {
            role: Role::User,
            content: UserContent::Text(text),
        }
    }

    /// A message holding `blocks` (runner writes one tool result per message).
    pub fn blocks(blocks: &'a [ContentBlock]) -> Self {
        UserMessage {
            role: Role::User,
            content: UserContent::Blocks(blocks),
        }
    }
}

/// One content block of an assistant response as a message of its own: like Claude Code,
/// runner writes one transcript record and one stream-json frame per block, each repeating the
/// response's id, model and usage.
///
/// `U` is the usage's shape: the transcript writes the model's [`Usage`] as stored (key order
/// input, output, cache write, cache read), stream-json the API's [`ApiUsage`].
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AssistantMessage<'a, U> {
    /// The model that answered.
    pub model: &'a str,
    /// The API message id, shared by the blocks of one response.
    pub id: &'a str,
    /// Always `message`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always [`Role::Assistant`].
    pub role: Role,
    /// The one block.
    pub content: &'a [ContentBlock],
    /// Why the model stopped; null while streaming.
    pub stop_reason: Option<&'a str>,
    /// The stop sequence that matched, if any.
    pub stop_sequence: Option<&'a str>,
    /// Token usage of the response (partial while streaming).
    pub usage: U,
}

impl<'a> AssistantMessage<'a, &'a Usage> {
    /// `block` of a completed response, with its stop reason and final usage (transcript).
    pub fn completed(meta: &'a AssistantMeta, block: &'a ContentBlock) -> Self {
        AssistantMessage {
            model: &meta.model,
            id: &meta.message_id,
            kind: "message",
            role: Role::Assistant,
            content: std::slice::from_ref(block),
            stop_reason: meta.stop_reason.as_ref().map(|s| s.as_str()),
            stop_sequence: meta.stop_sequence.as_deref(),
            usage: &meta.usage,
        }
    }
}

impl<'a> AssistantMessage<'a, ApiUsage> {
    /// `block` as it completes while the response streams (stream-json): the response has no
    /// stop reason yet, so `stop_reason` and `stop_sequence` are null.
    pub fn streamed(meta: &'a AssistantMeta, block: &'a ContentBlock) -> Self {
        AssistantMessage {
            model: &meta.model,
            id: &meta.message_id,
            kind: "message",
            role: Role::Assistant,
            content: std::slice::from_ref(block),
            stop_reason: None,
            stop_sequence: None,
            usage: ApiUsage::from(&meta.usage),
        }
    }
}

/// Token usage in the key order of the Anthropic API and the Agent SDK (stream-json's
/// assistant frames, the result message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApiUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

impl From<&Usage> for ApiUsage {
    fn from(u: &Usage) -> Self {
        ApiUsage {
            input_tokens: u.input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}
