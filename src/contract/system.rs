//! The parts of runner's `system` records and frames that the transcript and stream-json
//! write alike.

use serde::Serialize;

use crate::events::{CheckResult, Denial};

/// The fields of `runner_checks` (transcript record and stream-json frame alike).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ChecksFields<'a> {
    /// Attempt number (1-based).
    pub attempt: u32,
    /// The checks' results.
    pub checks: &'a [CheckResult],
}

/// The line that explains a denied call (the transcript record's `content`, the stream-json
/// frame's `message`).
pub fn denial_message(d: &Denial) -> String {
    format!("Permission to use {} was denied: {}", d.tool_name, d.reason)
}
