//! The contracts every layer of runner shares: how a task ended, what a model is sent and
//! returns, what a tool call touches and the scope it runs with, the roots paths resolve
//! through, and the redaction of secrets.
//!
//! This crate sits at the bottom of the workspace (`docs/src/architecture.md`, "Crates"): it
//! holds types and pure functions only, no I/O beyond reading environment variables, no async
//! runtime, HTTP client or git library, so every other crate can depend on it.
//!
//! - [`outcome`]: the outcome kinds, their exit codes, JUnit mapping and terminal reasons.
//! - [`model`]: the provider-neutral messages, content blocks, requests, responses and usage.
//! - [`access`]: what a tool call touches, the input of every permission decision.
//! - [`scope`]: what an allowed call may do when it runs.
//! - [`mode`]: the permission modes.
//! - [`roots`]: the directories a task's paths resolve through.
//! - [`redact`]: the redactor of secret values in every reversible form.

#![deny(missing_docs)]

pub mod access;
pub mod mode;
pub mod model;
mod model_schema;
pub mod outcome;
pub mod redact;
pub mod roots;
pub mod scope;

pub use access::Access;
pub use mode::PermissionMode;
pub use scope::Scope;
