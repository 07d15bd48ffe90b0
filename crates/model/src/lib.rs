//! Model providers and the types they share: one [`Provider`] trait with the Anthropic, Amazon
//! Bedrock, Google Vertex AI, OpenAI and replay providers behind it, the cassette recorder, SSE framing with an idle watchdog,
//! the block assembler, HTTP error parsing, the model table, and the retry policy for model
//! calls ([`retry`]).
//!
//! The messages themselves are `runner-protocol`'s ([`types`]); this crate is what speaks them
//! over HTTP. It knows nothing of tasks, tools or the agent loop, so it builds and tests alone.

#![deny(missing_docs)]

pub mod anthropic;
pub mod assembler;
pub mod bedrock;
pub mod cassette;
pub mod cassette_diff;
pub mod http;
pub mod http_error;
pub mod openai;
pub mod provider;
pub mod ratelimit;
pub mod record;
pub mod replay;
pub mod retry;
pub mod settings;
pub mod sse;
pub mod table;
pub mod vertex;
pub use runner_protocol::model as types;

pub use provider::{EventStream, ModelCall, Provider, ProviderError, ResponseMeta, StreamEvent};
pub use types::{
    ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason, ToolSpec, Usage,
};

/// runner's version, as sent in the `User-Agent` header and written into cassettes.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");
