//! The `stream-json` output format: Claude Code's headless NDJSON frames ([`frame::Frame`]).
//!
//! | event | frame |
//! |---|---|
//! | `Init` | `system/init` |
//! | `UserText` | `user` (all but the first: Claude Code does not echo the prompt) |
//! | `AssistantBlockStreamed` | `assistant` with one block, `stop_reason: null` |
//! | `AssistantResponse` | nothing (its blocks were streamed) |
//! | `ToolResult` | `user` with the `tool_result` block and `tool_use_result` |
//! | `PermissionDenied` | `system/permission_denied` |
//! | `AttemptAbandoned` | `system/runner_attempt_abandoned` (consumers ignore unknown subtypes); the next `assistant` frame lists the abandoned frames' uuids in `supersedes` |
//! | `ApiRetry` | `system/api_retry` |
//! | `Checks` | `system/runner_checks` |
//! | `CompactBoundary` | `system/compact_boundary` |
//! | `CompactSummary` | `user` with `isSynthetic: true` |
//! | `Worktree` | nothing (transcript only) |
//! | `Network` | `system/runner_network` |
//! | `Integrity` | `system/runner_integrity` |
//! | `Instructions` | `system/runner_instructions` |
//! | `ModelFallback` | `system/runner_model_fallback` |
//! | `Timing` | `system/runner_timing` |
//! | `Result` | `result` ([`ResultMessage`](crate::contract::result::ResultMessage)) |

mod builder;
pub mod frame;

use std::io;
use std::sync::Arc;

use crate::events::{RunEvent, Sink};
use crate::redact::Redactor;
use crate::report::SharedOut;

pub use builder::FrameBuilder;
use frame::Frame;

/// Writes one task's events as stream-json frames to a shared writer.
pub struct StreamJsonSink {
    out: SharedOut,
    redactor: Arc<Redactor>,
    frames: FrameBuilder,
}

impl StreamJsonSink {
    /// A sink writing to `out`, redacting with `redactor`.
    pub fn new(out: SharedOut, redactor: Arc<Redactor>) -> Self {
        StreamJsonSink {
            out,
            redactor,
            frames: FrameBuilder::new(),
        }
    }

    /// Replace the uuid source for frames the events carry no uuid for (`system/init`,
    /// `permission_denied`, `runner_checks`); tests use it for stable output.
    pub fn with_uuid_source(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.frames = self.frames.with_uuid_source(f);
        self
    }

    /// The frame for `event`, if it has one (not redacted).
    pub fn frame<'a>(&'a mut self, event: &'a RunEvent) -> Option<Frame<'a>> {
        self.frames.frame(event)
    }
}

impl Sink for StreamJsonSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        let Some(frame) = self.frames.frame(event) else {
            return Ok(());
        };
        // One serialization, redacted only where a secret occurs (as the transcript does).
        let line = self
            .redactor
            .to_redacted_json(&frame)
            .map_err(io::Error::other)?;
        super::write_line(&self.out, line)
    }
}

#[cfg(test)]
mod tests;
