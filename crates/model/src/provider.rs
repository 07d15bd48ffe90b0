//! The `Provider` trait: one streaming model call, as provider-neutral events.

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::{ModelRequest, StopReason, Usage};

/// A provider-neutral streaming event. Anthropic's SSE events map onto these one to one;
/// other providers synthesize them. Cassettes store them verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The response began.
    MessageStart {
        /// API message id.
        id: String,
        /// Model that answers.
        model: String,
        /// Initial usage (input tokens, cache).
        #[serde(default)]
        usage: Usage,
    },
    /// A content block began. `block` is the block's initial JSON (e.g. tool_use with id/name,
    /// text with empty text, or a whole server block).
    BlockStart {
        /// Block index.
        index: usize,
        /// Initial block JSON as the API sent it.
        block: Value,
    },
    /// Text appended to a text block.
    TextDelta {
        /// Block index.
        index: usize,
        /// Text fragment.
        text: String,
    },
    /// Thinking appended to a thinking block.
    ThinkingDelta {
        /// Block index.
        index: usize,
        /// Thinking fragment.
        thinking: String,
    },
    /// Signature for a thinking block.
    SignatureDelta {
        /// Block index.
        index: usize,
        /// Signature fragment.
        signature: String,
    },
    /// Partial JSON of a tool_use input.
    InputJsonDelta {
        /// Block index.
        index: usize,
        /// JSON fragment (may be empty).
        partial_json: String,
    },
    /// A citation appended to a text block.
    CitationDelta {
        /// Block index.
        index: usize,
        /// Citation object, verbatim.
        citation: Value,
    },
    /// A content block is complete.
    BlockStop {
        /// Block index.
        index: usize,
    },
    /// Top-level message update: stop reason and cumulative usage.
    MessageDelta {
        /// Stop reason, once known.
        #[serde(default)]
        stop_reason: Option<StopReason>,
        /// Matched stop sequence.
        #[serde(default)]
        stop_sequence: Option<String>,
        /// Cumulative usage.
        #[serde(default)]
        usage: Usage,
    },
    /// The response is complete.
    MessageStop,
    /// Keep-alive.
    Ping,
}

/// What went wrong in one model call. The retry policy (later) classifies these.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    /// The API answered with a non-2xx status.
    #[error("{}", http_error_text(*status, error_type.as_deref(), message, request_id.as_deref()))]
    Http {
        /// HTTP status.
        status: u16,
        /// The error body's `error.type`, if it had one.
        error_type: Option<String>,
        /// The error body's message (or the raw body).
        message: String,
        /// `request-id` header or body `request_id`.
        request_id: Option<String>,
        /// `retry-after` header, parsed.
        retry_after: Option<Duration>,
        /// `x-should-retry` header, parsed.
        should_retry: Option<bool>,
    },
    /// An `event: error` arrived in a 200 stream.
    #[error("stream error event: {error_type}: {message}")]
    StreamError {
        /// `error.type` (e.g. `overloaded_error`).
        error_type: String,
        /// `error.message`.
        message: String,
    },
    /// The stream carried something that is not valid SSE or not the expected JSON.
    #[error("malformed stream: {0}")]
    Malformed(String),
    /// The stream ended (connection closed) before `message_stop`.
    #[error("stream ended before message_stop{}", if *.after_bytes { "" } else { " (no bytes received)" })]
    Incomplete {
        /// Whether any SSE bytes arrived before the end.
        after_bytes: bool,
    },
    /// `message_stop` arrived while a content block was still open (it never got its
    /// `content_block_stop`) and the response was not cut by a token limit: the response is
    /// incomplete, and the attempt is retried as for a cut stream.
    #[error("the response ended while content block {index} (`{block_type}`) was still open")]
    UnclosedBlock {
        /// Index of the first block left open.
        index: usize,
        /// Its API type (`tool_use`, `text`, ...).
        block_type: String,
    },
    /// Network or transport failure.
    #[error("transport error: {message}")]
    Transport {
        /// What happened.
        message: String,
        /// True when the failure happened before any response byte arrived.
        before_response: bool,
    },
    /// No bytes for too long.
    #[error("stream stalled: no data for {0:?}")]
    Stalled(Duration),
    /// The replay provider cannot serve this request.
    #[error("replay: {0}")]
    Replay(String),
    /// The provider is misconfigured (bad base URL, missing key at call time).
    #[error("provider configuration: {0}")]
    Config(String),
}

fn http_error_text(
    status: u16,
    error_type: Option<&str>,
    message: &str,
    request_id: Option<&str>,
) -> String {
    let mut s = format!("HTTP {status}");
    if let Some(t) = error_type {
        s.push_str(&format!(" {t}"));
    }
    s.push_str(&format!(": {message}"));
    if let Some(r) = request_id {
        s.push_str(&format!(" (request-id {r})"));
    }
    s
}

/// A boxed stream of provider events for one attempt.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// Metadata a provider learns when the response starts (before events).
#[derive(Debug, Clone, Default)]
pub struct ResponseMeta {
    /// The provider's request id (Anthropic `request-id` header).
    pub request_id: Option<String>,
    /// The response's rate-limit headers (the batch's rate-limit governor paces with them).
    pub rate_limit: super::ratelimit::RateLimitHeaders,
}

/// A started model call: its metadata and its event stream.
pub struct ModelCall {
    /// Response metadata.
    pub meta: ResponseMeta,
    /// The events, in order. Ends after `MessageStop` or with an error.
    pub events: EventStream,
}

/// A model backend. One call is one attempt; retrying means calling again.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Short provider name (`anthropic`, `openai`, `replay`).
    fn name(&self) -> &str;

    /// Send the request and return once the response headers are in (or fail).
    async fn stream(&self, request: &ModelRequest) -> Result<ModelCall, ProviderError>;
}
