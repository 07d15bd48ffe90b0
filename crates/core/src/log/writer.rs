//! The log's writer: each log line with the secrets of every task started so far redacted
//! ([`crate::redact::register_for_logs`]), then routed by [`super::write_log`].

/// A `tracing_subscriber` writer that redacts the registered secrets in each log line before
/// writing it.
///
/// Logging never fails the run: a line that cannot be written (stderr closed, a broken pipe,
/// a full disk) is dropped, and the writer reports success so nothing upstream reacts to it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Routed by the log module: a task's buffered log group, or stderr (around the
        // progress line).
        let written = crate::redact::with_registered(|secrets| match secrets {
            Some(red) if red.occurs_in(buf) => {
                super::write_log(red.redact(&String::from_utf8_lossy(buf)).as_bytes())
            }
            _ => super::write_log(buf),
        });
        // Dropped: there is nowhere left to report that the log cannot be written.
        let _ = written;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // As in `write`: a failed flush of stderr loses log lines, never the run.
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LogWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn log_writer_reports_every_line_written() {
        // Into a task's buffer (not the test harness's stderr): each line whole, in order,
        // and the writer reports success.
        let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        super::super::TASK_LOG.sync_scope(buf.clone(), || {
            let mut w = LogWriter;
            assert_eq!(w.write(b"a log line\n").unwrap(), 11);
            w.write_all(b"another\n").unwrap();
            w.flush().unwrap();
        });
        assert_eq!(&*buf.lock().unwrap(), b"a log line\nanother\n");
    }
}
