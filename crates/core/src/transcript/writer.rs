//! The transcript sink: appends one redacted record per line and flushes it.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::events::{RunEvent, Sink};
use crate::redact::Redactor;
use crate::transcript::record::RecordBuilder;

/// Writes a task run's events as a JSONL transcript.
///
/// Each record is serialized whole and written with a single `write_all` on a file opened for
/// appending, then flushed, so a killed run leaves complete lines (at worst a truncated last
/// one, which [`read_transcript`](crate::transcript::read_transcript) tolerates). Records are
/// not fsynced: they survive the process, not the machine.
pub struct TranscriptSink {
    path: PathBuf,
    file: File,
    redactor: Arc<Redactor>,
    builder: RecordBuilder,
}

impl TranscriptSink {
    /// Open (create, or append to) the transcript at `path`, creating parent directories.
    pub fn create(path: &Path, redactor: Arc<Redactor>) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(TranscriptSink {
            path: path.to_path_buf(),
            file,
            redactor,
            builder: RecordBuilder::new(),
        })
    }

    /// Replace the record builder (tests fix its clock and uuids).
    pub fn with_builder(mut self, builder: RecordBuilder) -> Self {
        self.builder = builder;
        self
    }

    /// The transcript's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Sink for TranscriptSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        for record in self.builder.records(event) {
            let mut line = self
                .redactor
                .to_redacted_json(&record)
                .map_err(io::Error::other)?;
            line.push(b'\n');
            self.file
                .write_all(&line)
                .and_then(|()| self.file.flush())
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot write the transcript {}: {e}", self.path.display()),
                    )
                })?;
        }
        Ok(())
    }
}
