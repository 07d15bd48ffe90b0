//! The agent loop, its state, and how a run ends.
//!
//! - [`core`]: the [`Agent`] (fixed [`LoopConfig`], provider, tools, sinks) and shared steps;
//!   `builder`: the [`AgentBuilder`], the one way to make an agent.
//! - [`mod@run`]: the loop itself, one iteration per turn.
//! - [`request`]: one model request with streaming, early tool starts and retries.
//! - [`answer`]: running a response's tool calls and appending their results.
//! - [`compact`] and [`context`]: the request view of the conversation, compaction, estimates.
//! - [`normalize`]: the API view of stored messages (never mutated).
//! - [`state`]: what the loop carries between turns; [`stop`]: stop requests from outside.
//! - [`prompt`], [`structured`]: the system prompt, the `StructuredOutput` protocol.
//! - `timing`: where each turn's time goes; `fallback`: the switch to the fallback model.

mod answer;
mod builder;
mod compact;
pub mod context;
pub mod core;
mod fallback;
pub mod normalize;
pub mod prompt;
mod request;
pub mod run;
pub mod state;
pub mod stop;
pub mod structured;
pub(crate) mod timing;

pub(crate) use builder::AgentBuilder;
pub use core::{Agent, Input, LoopConfig, LoopLimits, hook_stopped};
pub use run::run;
pub use state::State;
pub use stop::{StopCause, Stopper};
