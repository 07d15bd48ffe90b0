//! Permission policy: modes, allow/deny rules and the decision for one tool call.
//!
//! - [`rule`]: rule syntax and matching (`Tool`, `Bash(git diff:*)`, `Edit(src/**)`).
//! - [`paths`]: path resolution and protected paths.

pub mod paths;
pub mod rule;

pub use rule::RuleError;
