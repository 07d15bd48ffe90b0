//! Task specs: types, loading with positioned errors, defaults, validation, schema.
//!
//! runner-spec reads the YAML files a user writes (and the inline task of `runner exec -p`)
//! into [`LoadedSpec`]s: every error names `file:line:col`, `matrix:` is expanded, defaults are
//! applied and every field is checked before anything runs. A setting that another crate
//! interprets is defined there and re-exported here (the permission mode from
//! `runner-policy`, the `sandbox:` section from `runner-exec`, provider settings from
//! `runner-model`), so the schema and the loader see one type.

#![deny(missing_docs)]

mod closest;
pub mod discover;
pub mod duration;
pub mod errors;
pub mod expand;
pub mod git;
pub mod hooks;
pub mod inline;
pub mod instructions;
pub mod load;
pub mod loaded;
pub mod locate;
pub mod matrix;
pub mod mcp;
pub mod mcp_config;
pub mod output;
/// The `sandbox:` section, defined where it is interpreted (`runner-exec`).
pub use runner_exec::sandbox::settings as sandbox;
pub mod schema;
pub mod shape;
pub mod types;
pub mod validate;
mod validate_all;

pub use discover::discover;
pub use duration::SpecDuration;
pub use errors::SpecError;
pub use git::{GitAuthor, GitBase, GitBranch, GitSettings};
pub use instructions::Instructions;
pub use load::{MAX_SPEC_BYTES, load, load_all};
pub use loaded::LoadedSpec;
pub use mcp::McpServerSpec;
pub use sandbox::{CheckSandbox, NetworkSetting, SandboxMode, SandboxSettings};
pub use types::*;

#[cfg(test)]
mod tests;
