//! Model providers and the types they share.

pub mod anthropic;
pub mod assembler;
pub mod cassette;
pub mod cassette_diff;
pub mod http;
pub mod http_error;
pub mod openai;
pub mod provider;
pub mod ratelimit;
pub mod record;
pub mod replay;
pub mod settings;
pub mod sse;
pub mod table;
pub use runner_protocol::model as types;

pub use provider::{EventStream, ModelCall, Provider, ProviderError, ResponseMeta, StreamEvent};
pub use types::{
    ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason, ToolSpec, Usage,
};
