//! OpenTelemetry for runner: a run's traces (batch → task → turn → model request and tool call,
//! in the GenAI semantic conventions) and metrics (tokens, cost, requests, retries, denials,
//! tool durations, task outcomes), exported over OTLP/HTTP (protobuf).
//!
//! Off unless configured ([`Config::from_env`]): a run without it builds nothing here and makes
//! no connection. Exporting happens on the SDK's own threads; [`Telemetry::shutdown`] flushes
//! within a bounded time, so an unreachable collector never holds a run up longer than that.
//!
//! The vocabulary is runner's, not the event stream's: the binary turns its run events into the
//! [`Turn`], [`ModelRequest`] and [`ToolCall`] values this crate records.

mod client;
mod config;
mod exporter;
mod metrics;
mod resource;
mod trace;

pub use config::{Config, ConfigError, DEFAULT_ENDPOINT, DEFAULT_TIMEOUT, Switch};
pub use exporter::{Telemetry, TelemetryError};
pub use trace::{
    Decision, ModelRequest, Note, Retry, TaskEnd, TaskStart, TaskTrace, ToolCall, Turn,
};
