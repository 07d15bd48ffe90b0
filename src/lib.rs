//! runner: run an LLM coding agent non-interactively, for CI and batch automation.
//!
//! This package is the binary: `main.rs` parses the command line and maps the outcome to an
//! exit code; this library holds the commands it runs ([`cli`], [`app`], [`init`]) and the
//! batch scheduler. The engine is `runner-core` (`crates/core`), re-exported here under its
//! module names so the binary, the integration tests and the benchmarks name it as
//! `runner::spec`, `runner::report`, …. `docs/src/architecture.md` maps the crates.

#![deny(clippy::print_stdout)]
#![warn(missing_docs)]

pub mod app;
pub(crate) mod batch;
pub mod cli;
pub mod init;

pub use runner_core::{
    VERSION, agent, atomic_file, event_schema, events, git, governor, integrity, log, model,
    outcome, permissions, prepare, process, redact, report, roots, sandbox, spec, tools,
    transcript,
};
pub(crate) use runner_core::{session, task};
