//! Secret redaction for every output (`[REDACTED:NAME]`).
//!
//! A [`Redactor`] holds the values of the task's secrets (the spec's `secrets:`, the provider's
//! API-key variable, `GITHUB_TOKEN`, a credential `actions/checkout` left in `.git/config`) and
//! replaces each occurrence in text with `[REDACTED:NAME]`: the value itself at any length from
//! [`MIN_SECRET_LEN`], and — for a value (or a line of a multi-line value) of at least
//! [`MIN_ENCODED_LEN`] bytes — its spaced, wrapped, re-cased, reversed, rot13, base64, base32,
//! hex, decimal, octal and URL-encoded forms and its halves ([`forms`] lists them, [`normalize`]
//! says how spacing and case are ignored). Two Aho-Corasick passes find every form of every
//! secret, so the cost is linear in the text.
//!
//! Where it applies: tool results before they go to the model (and before a large one is
//! spilled to disk); every sink (transcript, stream-json, json) as it writes; reports rendered
//! from a [`RunResult`](crate::events::RunResult) (`result.json`, text, JUnit, the step
//! summary), which are given an already redacted result
//! ([`RunResult::redacted`](crate::events::RunResult::redacted)); spill files of command
//! output ([`redact_file`]); the patch and the branch commit's message; the log.

mod git;
mod registry;

pub use git::git_credentials;
pub(crate) use registry::with_registered;
pub use registry::{redact_file, register_for_logs, registered};
pub use runner_protocol::redact::{
    MIN_ENCODED_LEN, MIN_HALVES_LEN, MIN_SECRET_LEN, Redactor, forms, normalize,
};
