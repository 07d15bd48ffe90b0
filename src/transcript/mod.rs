//! JSONL transcripts in Claude Code's on-disk record shape. (Implemented by the transcript work.)
//! TEMP STUB (lead)
#![allow(missing_docs)]
use crate::events::{RunEvent, Sink};
use crate::redact::Redactor;
use std::sync::Arc;
pub struct TranscriptSink;
impl TranscriptSink {
    pub fn create(_p: &std::path::Path, _r: Arc<Redactor>) -> std::io::Result<Self> {
        Ok(TranscriptSink)
    }
}
impl Sink for TranscriptSink {
    fn emit(&mut self, _e: &RunEvent) -> std::io::Result<()> {
        Ok(())
    }
}
