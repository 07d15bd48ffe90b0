//! The parts of runner's `system` records and frames that the transcript and stream-json
//! write alike.

use serde::Serialize;

use crate::events::{CheckResult, Denial};
use crate::sandbox::NetworkAttempt;

/// The fields of `runner_checks` (transcript record and stream-json frame alike).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ChecksFields<'a> {
    /// Attempt number (1-based).
    pub attempt: u32,
    /// The checks' results.
    pub checks: &'a [CheckResult],
}

/// The fields of `runner_network` (transcript record and stream-json frame alike): one
/// connection attempt through the sandbox's egress proxy.
#[derive(Debug, Clone, Copy, Serialize)]
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

/// The line that explains a denied call (the transcript record's `content`, the stream-json
/// frame's `message`).
pub(crate) fn denial_message(d: &Denial) -> String {
    format!("Permission to use {} was denied: {}", d.tool_name, d.reason)
}
