//! A task's handle on its governor: it waits for a place in flight, reports how its requests
//! ended, and keeps what the governor cost it ([`RateLimitTally`], in the task's result) and
//! the time it waited ([`WaitCredit`]), which its wall-clock limit does not count.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::limiter::{Governor, Permit};

/// What the rate-limit governor did to one task (the result's `runner_rate_limit`, JUnit's
/// `rate_limit.*` properties), with the governor's limit when the task ended.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct RateLimitTally {
    /// The task's requests that waited for the governor before they were sent.
    pub waits: u64,
    /// Those waits and the waits after its 429s, summed: not charged to `retry.budget` or
    /// `limits.timeout`.
    pub wait_ms: u64,
    /// Rate-limited responses (429) the task got.
    pub rate_limited: u64,
    /// Overloaded responses (529) the task got.
    pub overloaded: u64,
    /// Requests in flight the governor allowed when the task ended.
    pub limit: u32,
    /// The lowest it allowed until then.
    pub min_limit: u32,
    /// Its ceiling (`--jobs`).
    pub max_limit: u32,
}

impl RateLimitTally {
    /// Whether the governor never held the task back and the task met no rate limit.
    pub fn is_empty(&self) -> bool {
        self.waits == 0 && self.rate_limited == 0 && self.overloaded == 0
    }
}

/// Time a task spent waiting on the governor, including a wait under way.
#[derive(Debug, Default)]
pub(crate) struct WaitCredit {
    inner: Mutex<(Duration, Option<Instant>)>,
}

impl WaitCredit {
    fn begin(&self) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        c.1.get_or_insert_with(Instant::now);
    }

    fn end(&self) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let waited = c.1.take().map_or(Duration::ZERO, |at| at.elapsed());
        c.0 += waited;
    }

    /// All the time waited so far.
    pub(crate) fn total(&self) -> Duration {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        c.0 + c.1.map_or(Duration::ZERO, |at| at.elapsed())
    }
}

/// Sleep `limit` of wall-clock time that does not count the waits `credit` records: the
/// task's time limit, which a task waiting on the governor is not charged for.
pub(crate) async fn sleep_excluding(limit: Duration, credit: &WaitCredit) {
    let start = Instant::now();
    loop {
        let due = start + limit + credit.total();
        if Instant::now() >= due {
            return;
        }
        tokio::time::sleep_until(due).await;
    }
}

/// One task's handle on the governor of its provider and key.
#[derive(Debug, Clone)]
pub(crate) struct TaskGovernor {
    governor: Arc<Governor>,
    credit: Arc<WaitCredit>,
    tally: Arc<Mutex<RateLimitTally>>,
}

impl TaskGovernor {
    /// A handle on `governor` for a new task.
    pub(crate) fn new(governor: Arc<Governor>) -> Self {
        TaskGovernor {
            governor,
            credit: Arc::default(),
            tally: Arc::default(),
        }
    }

    /// A handle on a governor of its own (a task outside a batch's governors: tests).
    #[cfg(test)]
    pub(crate) fn solo() -> Self {
        Self::new(Arc::new(Governor::new(1, true)))
    }

    /// Whether the governor is on: the task's 429s are then free retries.
    pub(crate) fn governs(&self) -> bool {
        self.governor.enabled()
    }

    /// The waits the task's time limit leaves out.
    pub(crate) fn credit(&self) -> Arc<WaitCredit> {
        self.credit.clone()
    }

    fn tally_mut(&self) -> std::sync::MutexGuard<'_, RateLimitTally> {
        self.tally.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn charge_wait(&self, waited: Duration) {
        if waited.is_zero() {
            return;
        }
        let mut t = self.tally_mut();
        t.waits += 1;
        t.wait_ms = t
            .wait_ms
            .saturating_add(u64::try_from(waited.as_millis()).unwrap_or(u64::MAX));
    }

    /// Wait for a place in flight (`None`: `cancel` fired).
    pub(crate) async fn acquire(&self, cancel: &CancellationToken) -> Option<Permit> {
        self.credit.begin();
        let got = self.governor.acquire(cancel).await;
        self.credit.end();
        let (permit, waited) = got?;
        self.charge_wait(waited);
        Some(permit)
    }

    /// The request of `permit` was rate limited (429).
    pub(crate) fn rate_limited(&self, permit: Permit, retry_after: Option<Duration>) {
        self.tally_mut().rate_limited += 1;
        permit.rate_limited(retry_after);
    }

    /// The request of `permit` met an overloaded model (529).
    pub(crate) fn overloaded(&self, permit: Permit) {
        self.tally_mut().overloaded += 1;
        permit.overloaded();
    }

    /// Hold every task's requests back for `d` (a 429's wait with the governor off).
    pub(crate) fn pause(&self, d: Duration) {
        self.governor.pause(d);
    }

    /// Time since a request through the governor last succeeded.
    pub(crate) fn since_success(&self) -> Duration {
        self.governor.since_success()
    }

    /// What the governor did to the task, with its limits now.
    pub(crate) fn tally(&self) -> RateLimitTally {
        let s = self.governor.snapshot();
        RateLimitTally {
            limit: s.limit,
            min_limit: s.min_limit,
            max_limit: s.max_limit,
            ..*self.tally_mut()
        }
    }
}
