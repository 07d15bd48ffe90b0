//! Task specs: types, loading with positioned errors, defaults, validation, schema.

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
