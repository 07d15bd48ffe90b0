//! Permission policy: modes, allow/deny rules and the decision for one tool call.
//!
//! - [`rule`]: rule syntax and matching (`Tool`, `Bash(git diff:*)`, `Edit(src/**)`).
//! - [`bash`]: Bash command analysis on brush-parser's AST (fail closed).
//! - [`readonly`]: the read-only command set, as data.
//! - [`paths`]: path resolution and protected paths.

pub mod bash;
pub mod paths;
pub mod readonly;
pub mod rule;

pub use rule::RuleError;
