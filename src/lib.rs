//! runner: run an LLM coding agent non-interactively, for CI and batch automation.
//!
//! The library holds everything; `main.rs` only parses the command line and maps the outcome
//! to an exit code. `docs/src/architecture.md` maps the modules and the data flow of a run.
//!
//! The public modules are what the binary, the integration tests and the benchmarks drive:
//! the commands ([`app`], [`cli`], [`init`], [`log`]), the contracts runner writes ([`events`],
//! [`outcome`], [`report`], [`transcript`]), the spec ([`spec`]), the model providers
//! ([`model`]), the tools and the policy that decides them ([`tools`], [`permissions`]), how
//! processes start and are confined ([`process`], [`sandbox`], [`roots`]), git isolation
//! ([`git`]), preparation and resume ([`prepare`]), redaction ([`redact`]) and the loop's
//! request view ([`agent`]). Everything else is crate-private: the session that assembles a
//! run, the batch scheduler, hooks, MCP servers, retries and verify checks.

#![deny(clippy::print_stdout)]
#![warn(missing_docs)]

pub mod agent;
pub mod app;
pub mod atomic_file;
pub(crate) mod batch;
pub mod cli;
pub(crate) mod contract;
pub mod event_schema;
pub mod events;
pub mod git;
pub mod governor;
pub(crate) mod hooks;
pub mod init;
pub mod integrity;
pub mod log;
pub(crate) mod mcp;
pub use runner_model as model;
pub use runner_policy as permissions;
pub use runner_protocol::outcome;
pub mod prepare;
pub use runner_exec::process;
pub mod redact;
pub mod report;
pub use runner_exec::sandbox;
pub(crate) use runner_model::retry;
pub use runner_policy::roots;
pub(crate) mod session;
pub mod spec;
pub(crate) mod task;
pub mod tools;
pub mod transcript;
pub(crate) mod verify;

#[cfg(test)]
mod policy_tests;

/// runner's version, as written into transcripts and `system/init`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
