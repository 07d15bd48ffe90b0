//! Stop requests from outside the loop: signals, the task's time limit, and a change to the
//! files that steer git and CI (`crate::integrity`).

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Why the run was asked to stop from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// SIGINT (2) or SIGTERM (15).
    Signal(i32),
    /// The task's wall-clock limit.
    Timeout,
    /// A command changed files that steer git and CI (undone; the task ends `denied`).
    Integrity,
}

/// A cancellation token plus the reason it was cancelled.
#[derive(Debug, Clone, Default)]
pub struct Stopper {
    token: CancellationToken,
    cause: Arc<Mutex<Option<StopCause>>>,
}

impl Stopper {
    /// Request a stop; the first cause wins.
    pub fn stop(&self, cause: StopCause) {
        if let Ok(mut c) = self.cause.lock() {
            c.get_or_insert(cause);
        }
        self.token.cancel();
    }

    /// The token tools and streams watch.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Why it stopped, if it did.
    pub fn cause(&self) -> Option<StopCause> {
        if !self.token.is_cancelled() {
            return None;
        }
        self.cause
            .lock()
            .ok()
            .and_then(|c| *c)
            .or(Some(StopCause::Signal(2)))
    }
}
