//! runner's permission engine: modes, allow/deny rules and the decision for one tool call.
//!
//! The agent loop builds one [`Policy`] per task from the spec's `permissions` and calls
//! [`Policy::decide`] for every tool call after input validation. With no human to ask, every
//! "would prompt" is a [`Decision::Deny`] with a reason the model can read.
//!
//! The crate stands alone: it knows what a call touches ([`Access`]) and the task's roots
//! ([`roots::SessionRoots`]), not the tools, the agent loop or the sandbox, so it builds,
//! tests and benchmarks without them (no async runtime, HTTP or git library).
//!
//! - [`rule`]: rule syntax and matching (`Tool`, `Bash(git diff:*)`, `Edit(src/**)`).
//! - [`bash`]: Bash command analysis on brush-parser's AST (fail closed).
//! - [`posix`]: scripts for a POSIX shell (dash) that bash would read differently.
//! - [`invocation`]: a shell's options before its script (`bash -o pipefail -c`).
//! - [`readonly`]: the read-only command set, as data.
//! - [`changes`]: commands that change later paths of the same line (links, archives, new names).
//! - [`wrappers`]: commands that run another command (`timeout`, `env`, `xargs`, `sudo`).
//! - [`git`]: git's global options, read-only subcommands, repository configuration risks.
//! - [`sed`]: sed script parsing (commands that run, write or read files).
//! - [`matchtext`]: the texts deny and ask rules are matched against.
//! - [`equivalents`]: commands with the effect of another, for deny and ask rules.
//! - [`variables`]: which variable assignments a command may make.
//! - [`globs`]: brace and glob expansion against the file system.
//! - [`walk`]: bounded directory walks for recursive reads, removals and copies.
//! - [`options`]: the option model: per program, what its options take and are; one parser
//!   for every place that reads a program's arguments (risks, the read-only set, wrappers).
//! - [`args`]: risky arguments of allowed programs (`git --output`, `find -exec`, `sed -i`).
//! - [`netreads`]: the local files curl and wget read and send (`-d @FILE`, `-T`, `file://`).
//! - [`paths`]: path resolution and protected paths.
//! - [`autoexec`]: files other tools execute later (hook, version and package managers, editors, CI).
//! - [`policy`]: the decision chain.
//! - [`program`]: which program a command's name runs (a path is the file it names).
//! - [`access`]: what a tool call touches, the input of every decision.
//! - [`roots`]: the directories a task's paths resolve through.

pub use runner_protocol::{access, mode, roots};
pub mod args;
pub mod autoexec;
pub mod bash;
pub mod changes;
pub mod equivalents;
pub mod git;
pub mod globs;
pub mod invocation;
pub mod matchtext;
pub mod netreads;
#[cfg(test)]
mod option_tests;
pub mod options;
pub mod paths;
pub mod policy;
pub mod posix;
pub mod program;
pub mod readonly;
pub mod rule;
pub mod sed;
pub mod variables;
pub mod walk;
pub mod word;
pub mod wrappers;

pub use access::Access;
pub use mode::PermissionMode;
pub use policy::{Decision, Policy, Scope, ToolCall};
pub use rule::RuleError;
