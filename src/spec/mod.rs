//! Task specs: types, loading with positioned errors, defaults, validation, schema.

pub mod discover;
pub mod duration;
pub mod errors;
pub mod git;
pub mod inline;
pub mod load;
pub mod locate;
pub mod matrix;
pub mod output;
pub mod sandbox;
pub mod schema;
pub mod shape;
pub mod types;
pub mod validate;

pub use discover::discover;
pub use duration::SpecDuration;
pub use git::{GitAuthor, GitBase, GitBranch, GitSettings};
pub use load::{LoadedSpec, MAX_SPEC_BYTES, SpecError, load, load_all};
pub use sandbox::{CheckSandbox, NetworkSetting, SandboxMode, SandboxSettings};
pub use types::*;

#[cfg(test)]
mod tests;
