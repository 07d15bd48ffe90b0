//! The parts of runner's `system` records and frames that the transcript and stream-json
//! write alike.

use schemars::JsonSchema;
use serde::Serialize;

use crate::events::{CheckResult, Denial, InstructionFile, Phases};
use crate::integrity::IntegrityChange;
use crate::sandbox::NetworkAttempt;

/// The fields of `runner_checks` (transcript record and stream-json frame alike).
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ChecksFields<'a> {
    /// Attempt number (1-based).
    pub attempt: u32,
    /// The checks' results.
    pub checks: &'a [CheckResult],
}

/// The fields of `runner_network` (transcript record and stream-json frame alike): one
/// connection attempt through the sandbox's egress proxy.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NetworkFields<'a> {
    /// The host asked for.
    pub host: &'a str,
    /// The port asked for.
    pub port: u16,
    /// `CONNECT`, or the method of a plain HTTP request.
    pub method: &'a str,
    /// Whether the host is allowed.
    pub allowed: bool,
    /// Why it did not go through, when it did not.
    pub error: Option<&'a str>,
}

impl<'a> From<&'a NetworkAttempt> for NetworkFields<'a> {
    fn from(a: &'a NetworkAttempt) -> Self {
        NetworkFields {
            host: &a.host,
            port: a.port,
            method: &a.method,
            allowed: a.allowed,
            error: a.error.as_deref(),
        }
    }
}

/// The line that describes a connection attempt.
pub(crate) fn network_message(a: &NetworkAttempt) -> String {
    match (&a.error, a.allowed) {
        (None, _) => format!("sandbox proxy: {} {}:{} allowed", a.method, a.host, a.port),
        (Some(e), true) => format!(
            "sandbox proxy: {} {}:{} allowed but failed: {e}",
            a.method, a.host, a.port
        ),
        (Some(e), false) => format!(
            "sandbox proxy: {} {}:{} refused: {e}",
            a.method, a.host, a.port
        ),
    }
}

/// The fields of `runner_integrity` (transcript record and stream-json frame alike): one
/// change to a file that steers git and CI, and whether runner undid it.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct IntegrityFields<'a> {
    /// The path that changed.
    pub path: &'a std::path::Path,
    /// `added`, `removed`, `modified`, `mode_changed`, `replaced` or `unreadable`.
    pub change: &'a str,
    /// What changed, in words.
    pub detail: &'a str,
    /// The command after which it was found.
    pub after: &'a str,
    /// Whether runner undid it.
    pub restored: bool,
    /// Why it could not be undone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

impl<'a> From<&'a IntegrityChange> for IntegrityFields<'a> {
    fn from(c: &'a IntegrityChange) -> Self {
        IntegrityFields {
            path: &c.path,
            change: &c.change,
            detail: &c.detail,
            after: &c.after,
            restored: c.restored,
            error: c.error.as_deref(),
        }
    }
}

/// The line that explains a denied call (the transcript record's `content`, the stream-json
/// frame's `message`).
pub(crate) fn denial_message(d: &Denial) -> String {
    format!("Permission to use {} was denied: {}", d.tool_name, d.reason)
}

/// The fields of `runner_instructions` (transcript record and stream-json frame alike): the
/// project instruction files the first prompt carried.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InstructionsFields<'a> {
    /// The files, with their hashes, in the order the prompt carries them.
    pub files: &'a [InstructionFile],
}

/// The line that describes the instruction files read.
pub(crate) fn instructions_message(files: &[InstructionFile]) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            let cut = if f.truncated { ", truncated" } else { "" };
            format!("{} ({} bytes{cut})", f.path.display(), f.bytes)
        })
        .collect();
    format!("project instructions: {}", names.join(", "))
}

/// The fields of `runner_model_fallback` (transcript record and stream-json frame alike).
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ModelFallbackFields<'a> {
    /// The model given up on.
    pub from_model: &'a str,
    /// The model used for the rest of the task.
    pub to_model: &'a str,
    /// The last overload error of the main model.
    pub error: &'a str,
}

/// The fields of `runner_timing` (transcript record and stream-json frame alike): where one
/// turn's wall time went.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TimingFields<'a> {
    /// The turn (1-based).
    pub turn: u32,
    /// Its wall time; the phases add up to it.
    pub wall_ms: u64,
    /// The phases.
    #[serde(flatten)]
    pub phases: &'a Phases,
}
