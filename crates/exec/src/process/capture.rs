//! Bounded capture of a child's output stream: the first and last [`KEEP_BYTES`] are kept in
//! memory, the text for the reader keeps the head and tail around a marker, and a stream longer
//! than [`SPILL_AT`] bytes is written in full to a spill file whose path the result names.
//! [`capture`] blocks the thread it runs on until the stream ends or it is stopped.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cancel::{Cancel, FALLBACK_TICK, wait_readable};

/// Characters of each stream kept in the text for the reader; the rest is spilled.
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// Bytes of a stream kept in memory from its start and from its end.
const KEEP_BYTES: usize = 64 * 1024;
/// A stream longer than this many bytes is spilled in full to a file.
const SPILL_AT: u64 = MAX_OUTPUT_CHARS as u64;

/// One stream's captured output.
#[derive(Debug, Default)]
pub struct Captured {
    /// The text for the model (head and tail around a marker when long).
    pub text: String,
    /// Bytes the stream carried.
    pub total_bytes: u64,
    /// Where the full stream was written, when it was too long to keep inline.
    pub spill_path: Option<PathBuf>,
}

/// The spill file of a long stream could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub(crate) struct SpillError {
    /// The spill file.
    path: PathBuf,
    /// What writing it reported.
    source: std::io::Error,
}

/// Bounded capture of a stream: the first and last [`KEEP_BYTES`], everything spilled to a file
/// once it passes [`SPILL_AT`] bytes.
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    /// Characters seen (bytes that do not continue a UTF-8 sequence).
    chars: usize,
    spill_path: PathBuf,
    spill: Option<std::fs::File>,
}

/// Capture the stream `reader` (a pipe's read end) until it ends or `stop` is set.
pub(crate) fn capture(
    reader: Option<OwnedFd>,
    spill_path: PathBuf,
    stop: &Cancel,
) -> Result<Captured, SpillError> {
    let mut cap = Capture {
        head: Vec::new(),
        tail: VecDeque::new(),
        total_bytes: 0,
        chars: 0,
        spill_path,
        spill: None,
    };
    let Some(reader) = reader else {
        return Ok(cap.finish());
    };
    let mut reader = std::fs::File::from(reader);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if stop.is_cancelled() {
            break;
        }
        // Without a descriptor for the stop flag, look at it every tick.
        let until = stop.fd().is_none().then(|| Instant::now() + FALLBACK_TICK);
        match wait_readable(&[Some(reader.as_fd()), stop.fd()], until) {
            Ok(ready) if ready[0] => {}
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "reading command output failed");
                break;
            }
        }
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!(error = %e, "reading command output failed");
                0
            }
        };
        if n == 0 {
            break;
        }
        cap.push(&buf[..n])?;
    }
    if let Some(f) = cap.spill.as_mut() {
        f.flush().map_err(|source| SpillError {
            path: cap.spill_path.clone(),
            source,
        })?;
    }
    Ok(cap.finish())
}

impl Capture {
    fn push(&mut self, chunk: &[u8]) -> Result<(), SpillError> {
        self.total_bytes += chunk.len() as u64;
        self.chars += chunk.iter().filter(|b| (**b & 0xC0) != 0x80).count();
        let spill_err = |source: std::io::Error, p: &Path| SpillError {
            path: p.to_path_buf(),
            source,
        };
        if self.spill.is_none() && self.total_bytes > SPILL_AT {
            let mut f = std::fs::File::create(&self.spill_path)
                .map_err(|e| spill_err(e, &self.spill_path))?;
            f.write_all(&self.head)
                .map_err(|e| spill_err(e, &self.spill_path))?;
            let tail: Vec<u8> = self.tail.iter().copied().collect();
            f.write_all(&tail)
                .map_err(|e| spill_err(e, &self.spill_path))?;
            self.spill = Some(f);
        }
        if let Some(f) = self.spill.as_mut() {
            f.write_all(chunk)
                .map_err(|e| spill_err(e, &self.spill_path))?;
        }
        let room = KEEP_BYTES.saturating_sub(self.head.len()).min(chunk.len());
        self.head.extend_from_slice(&chunk[..room]);
        self.tail.extend(&chunk[room..]);
        let excess = self.tail.len().saturating_sub(KEEP_BYTES);
        self.tail.drain(..excess);
        Ok(())
    }

    fn finish(self) -> Captured {
        let spill_path = self.spill.is_some().then_some(self.spill_path);
        let text = if self.tail.is_empty() {
            let full = String::from_utf8_lossy(&self.head);
            truncate_head_tail(full.trim_end_matches('\n'), MAX_OUTPUT_CHARS).0
        } else {
            let half = MAX_OUTPUT_CHARS / 2;
            let tail: Vec<u8> = self.tail.into_iter().collect();
            let start = tail
                .iter()
                .position(|b| (*b & 0xC0) != 0x80)
                .unwrap_or(tail.len());
            let tail = String::from_utf8_lossy(&tail[start..]);
            let untrimmed = tail.len();
            let tail = tail.trim_end_matches('\n');
            let trimmed = untrimmed - tail.len();
            let head = String::from_utf8_lossy(&self.head);
            let head: String = head.chars().take(half).collect();
            let tail_chars = tail.chars().count();
            let tail: String = tail.chars().skip(tail_chars.saturating_sub(half)).collect();
            let dropped = self.chars.saturating_sub(half * 2 + trimmed);
            format!("{head}\n\n... [{dropped} characters truncated] ...\n\n{tail}")
        };
        Captured {
            text,
            total_bytes: self.total_bytes,
            spill_path,
        }
    }
}

/// Keep at most `max` characters of `text`: its head and tail around a
/// `... [N characters truncated] ...` marker. Returns the text and the number of dropped chars.
pub(crate) fn truncate_head_tail(text: &str, max: usize) -> (String, usize) {
    let total = text.chars().count();
    if total <= max {
        return (text.to_string(), 0);
    }
    let head_len = max / 2;
    let tail_len = max - head_len;
    let dropped = total - head_len - tail_len;
    let head: String = text.chars().take(head_len).collect();
    let tail: String = text.chars().skip(total - tail_len).collect();
    (
        format!("{head}\n\n... [{dropped} characters truncated] ...\n\n{tail}"),
        dropped,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_truncation_keeps_both_ends() {
        let text: String = (0..100)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let (out, dropped) = truncate_head_tail(&text, 10);
        assert_eq!(dropped, 90);
        assert!(out.starts_with("abcde"));
        assert!(out.ends_with(&text[95..]));
        assert!(out.contains("[90 characters truncated]"));
        assert_eq!(truncate_head_tail("short", 10), ("short".to_string(), 0));
    }
}
