//! runner-core: the engine that runs an LLM coding agent on one task, and everything a run
//! of many tasks shares.
//!
//! The binary (the root package: `cli`, `app`, the batch scheduler, `init`) drives it. The
//! public modules are what the binary, the integration tests and the benchmarks use: the
//! contracts runner writes ([`events`], [`outcome`], [`report`], [`transcript`], [`log`]), the
//! spec ([`spec`]), the model providers ([`model`]), the tools and the policy that decides them
//! ([`tools`], [`permissions`]), how processes start and are confined ([`process`],
//! [`sandbox`], [`roots`]), git isolation ([`git`]), preparation and resume ([`prepare`]),
//! redaction ([`redact`]), the loop's request view ([`agent`]), one task's run ([`task`],
//! [`session`]) and the batch's shared limits ([`governor`]). Everything else is crate-private:
//! hooks, MCP servers, retries and verify checks. `docs/src/architecture.md` maps the crates
//! and the data flow of a run.

#![deny(clippy::print_stdout)]
#![warn(missing_docs)]

pub mod agent;
pub use runner_report::atomic_file;
pub(crate) mod child;
pub(crate) use runner_report::contract;
pub mod event_schema;
pub use runner_git as git;
pub use runner_report::events;
pub mod governor;
pub(crate) mod hooks;
pub mod integrity;
pub use runner_report::log;
pub(crate) mod mcp;
pub use runner_model as model;
pub use runner_policy as permissions;
pub use runner_protocol::outcome;
pub mod prepare;
pub use runner_exec::process;
pub use runner_exec::sandbox;
pub(crate) use runner_model::retry;
pub use runner_policy::roots;
pub use runner_report as report;
pub use runner_report::redact;
pub mod session;
pub use runner_spec as spec;
pub mod task;
pub mod tools;
pub mod transcript;
pub(crate) mod verify;

#[cfg(test)]
mod policy_tests;

/// runner's version, as written into transcripts and `system/init`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
