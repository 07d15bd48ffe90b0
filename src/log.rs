//! The route every log line takes to stderr: into the running task's buffer when its log is
//! being buffered (concurrent tasks in GitHub Actions, written later as one `::group::`), else
//! to stderr, clearing and redrawing the progress line around it.

use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};

tokio::task_local! {
    static TASK_LOG: Arc<Mutex<Vec<u8>>>;
}

/// Write one log line: to the current task's buffer if it has one, else to stderr (around the
/// progress line, if one is shown).
pub(crate) fn write_log(bytes: &[u8]) -> io::Result<()> {
    let buffered = TASK_LOG.try_with(|b| {
        b.lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes)
    });
    if buffered.is_ok() {
        return Ok(());
    }
    crate::report::progress::write_around(bytes)
}

/// Run `f` with its log lines collected in `buffer`.
pub(crate) async fn buffered<F: Future>(buffer: Arc<Mutex<Vec<u8>>>, f: F) -> F::Output {
    TASK_LOG.scope(buffer, f).await
}
