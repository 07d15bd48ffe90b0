//! The `json` output format: the [`ResultMessage`] of each task, one line per task.

use std::io;
use std::sync::Arc;

use serde_json::Value;

use crate::contract::result::ResultMessage;
pub use crate::contract::result::error_texts;
use crate::events::{RunEvent, RunResult, Sink};
use crate::redact::Redactor;
use crate::report::{SharedOut, write_line};

/// The result message of a finished task as a JSON value (not redacted).
///
/// The message itself is [`ResultMessage`]; this is for callers that print or inspect it.
pub fn result_value(r: &RunResult) -> Value {
    // Serializing a ResultMessage cannot fail: its only fallible part (`runner_git`) is
    // written as null instead.
    serde_json::to_value(ResultMessage::new(r)).unwrap_or(Value::Null)
}

/// The `json` output format: writes the redacted result object of each task as one line.
pub struct JsonSink {
    out: SharedOut,
    redactor: Arc<Redactor>,
}

impl JsonSink {
    /// A sink writing to `out`, redacting with `redactor`.
    pub fn new(out: SharedOut, redactor: Arc<Redactor>) -> Self {
        JsonSink { out, redactor }
    }
}

impl Sink for JsonSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        if let RunEvent::Result(r) = event {
            let line = self
                .redactor
                .to_redacted_json(&ResultMessage::new(r))
                .map_err(io::Error::other)?;
            write_line(&self.out, line)?;
        }
        Ok(())
    }
}
