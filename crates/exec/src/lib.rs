//! How runner starts programs and confines them: every child process — the Bash tool's
//! commands, hooks, verify checks, MCP servers — is made by [`process::spawn`] (its
//! environment, its process group, its captured output) inside the task's [`sandbox`]
//! (Landlock, seccomp, `no_new_privs`, the egress proxy).
//!
//! The crate knows the permission scope a call was allowed with (`runner-policy`'s `Scope`)
//! and the spec's `sandbox:` settings ([`sandbox::settings`], which the spec re-exports), not
//! the agent loop, the model providers or git: it builds, tests and is benchmarked without
//! them (no HTTP client or git library), and without an async runtime: its calls block the
//! calling thread, ending early through a [`cancel::Cancel`]; an async caller runs them on a
//! thread of its own.

#![deny(missing_docs)]

pub mod cancel;
pub mod process;
pub mod sandbox;
