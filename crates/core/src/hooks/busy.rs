//! The clock of hook time: wall time during which at least one hook ran, which the turn's
//! clock takes out of the phase the hook interrupted (see the agent's `timing`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Wall time during which at least one hook ran (overlapping hooks count once).
#[derive(Debug, Default)]
pub(crate) struct BusyClock {
    inner: Mutex<Busy>,
}

#[derive(Debug, Default)]
struct Busy {
    running: u32,
    since: Option<Instant>,
    total: Duration,
}

/// Counts as busy until dropped.
pub(crate) struct BusyGuard(Arc<BusyClock>);

impl BusyClock {
    /// Start counting one hook; it counts until the guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> BusyGuard {
        let mut b = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if b.running == 0 {
            b.since = Some(Instant::now());
        }
        b.running += 1;
        BusyGuard(self.clone())
    }

    /// Busy time so far, including the span still running.
    pub(crate) fn total(&self) -> Duration {
        let b = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        b.total + b.since.map_or(Duration::ZERO, |s| s.elapsed())
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let mut b = self.0.inner.lock().unwrap_or_else(|p| p.into_inner());
        b.running = b.running.saturating_sub(1);
        if b.running == 0
            && let Some(s) = b.since.take()
        {
            b.total += s.elapsed();
        }
    }
}
