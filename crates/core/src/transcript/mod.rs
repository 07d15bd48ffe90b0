//! JSONL transcripts in Claude Code's on-disk record shape.
//!
//! [`record`] defines the records and [`RecordBuilder`] makes them from run events;
//! [`TranscriptSink`] writes them (one record per line, appended and flushed per record, so a
//! killed run leaves a valid prefix); [`read_transcript`] reads them back for resume.

pub mod reader;
pub mod record;
pub mod resume;
pub mod writer;

pub use reader::{
    Conversation, Record, ToolCallRecord, Transcript, TranscriptError, TruncatedLine,
    read_transcript,
};
pub use record::RecordBuilder;
pub use writer::TranscriptSink;
