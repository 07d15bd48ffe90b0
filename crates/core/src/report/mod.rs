//! Reports: stream-json frames, json results, text blocks and JUnit XML.
//!
//! Sinks ([`stream_json::StreamJsonSink`], [`json::JsonSink`]) redact what they write with the
//! [`Redactor`](crate::redact::Redactor) they hold. The renderers that take a finished
//! [`RunResult`](crate::events::RunResult) ([`text::render_text`], [`junit::render_junit`])
//! expect the caller to pass an already redacted result
//! ([`RunResult::redacted`](crate::events::RunResult::redacted)).

pub mod footprint;
pub mod github;
pub mod json;
pub mod junit;
pub mod merge;
pub mod money;
pub mod preflight;
pub mod progress;
pub mod rate_limit;
pub mod result_file;
pub mod step_outputs;
pub mod stream_json;
pub mod structured;
pub mod text;
pub mod timing;
pub(crate) mod tool_log;
pub mod xml_text;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// stdout (or any writer) shared by several tasks' sinks. Every frame is written and flushed
/// as one line under the lock, so frames of different tasks interleave but never tear.
pub type SharedOut = Arc<Mutex<Box<dyn Write + Send>>>;

/// Wrap a writer as a [`SharedOut`].
pub fn shared_out<W: Write + Send + 'static>(w: W) -> SharedOut {
    Arc::new(Mutex::new(Box::new(w)))
}

/// Serialize `value` as one compact JSON line and write + flush it under the lock.
pub fn write_json_line(out: &SharedOut, value: &Value) -> io::Result<()> {
    let line = serde_json::to_vec(value).map_err(io::Error::other)?;
    write_line(out, line)
}

/// Write one already-serialized JSON line (`line` without its newline) to the shared stdout.
pub(crate) fn write_line(out: &SharedOut, mut line: Vec<u8>) -> io::Result<()> {
    line.push(b'\n');
    // A poisoned lock only means another task panicked mid-write; the writer is still usable.
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    w.write_all(&line)?;
    w.flush()
}
