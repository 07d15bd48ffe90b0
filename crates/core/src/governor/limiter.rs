//! One governor: how many model requests of one provider and key may be in flight (additive
//! increase, multiplicative decrease on 429 and 529), a pause every request waits out
//! (`retry-after`, an exhausted token limit), and the pace the requests limit's headers set
//! once its bucket runs low.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::model::ratelimit::RateLimitHeaders;

/// How far ahead a pause may reach (a longer one saturates to this).
const MAX_PAUSE: Duration = Duration::from_secs(365 * 24 * 3600);
/// The longest pause an exhausted token limit sets (its `reset` is the time until the bucket
/// is full, far more than the next request needs).
const MAX_TOKENS_PAUSE: Duration = Duration::from_secs(10);
/// The factor a 429 or 529 multiplies the in-flight limit by.
const DECREASE: f64 = 0.5;
/// Paced starts are this much further apart than the bucket's refill rate, so that a request
/// does not reach the API just before its token does.
const PACE_MARGIN: f64 = 1.03;
/// How many paced starts a late start may make up for.
const CATCH_UP: u32 = 2;

/// What a governor has seen and where it stands, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Snapshot {
    /// Requests in flight it allows now.
    pub limit: u32,
    /// The lowest that limit has been.
    pub min_limit: u32,
    /// Its ceiling (the batch's `--jobs`).
    pub max_limit: u32,
    /// Rate-limited responses (429).
    pub rate_limited: u64,
    /// Overloaded responses (529, `overloaded_error`).
    pub overloaded: u64,
    /// Requests that had to wait before they were sent.
    pub waits: u64,
    /// Their waits, summed.
    pub wait: Duration,
    /// Requests sent.
    pub requests: u64,
}

#[derive(Debug)]
struct State {
    limit: f64,
    /// Successes since the limit last changed: a limit's worth raises it by one.
    acks: u32,
    in_flight: u32,
    paused_until: Option<Instant>,
    /// Least time between two request starts while the requests bucket runs low.
    pace: Option<Duration>,
    /// The earliest next start under `pace`.
    next_start: Option<Instant>,
    last_decrease: Option<Instant>,
    last_success: Instant,
    snapshot: Snapshot,
}

/// One provider and key's governor, shared by every task that uses them.
#[derive(Debug)]
pub(crate) struct Governor {
    /// Off (`RUNNER_RATE_GOVERNOR=off`): only pauses, each task retries on its own schedule.
    enabled: bool,
    max: u32,
    state: Mutex<State>,
    changed: Notify,
}

impl Governor {
    /// A governor that allows `max` requests in flight until the first 429 or 529.
    pub(crate) fn new(max: u32, enabled: bool) -> Self {
        let max = max.max(1);
        Governor {
            enabled,
            max,
            state: Mutex::new(State {
                limit: f64::from(max),
                acks: 0,
                in_flight: 0,
                paused_until: None,
                pace: None,
                next_start: None,
                last_decrease: None,
                last_success: Instant::now(),
                snapshot: Snapshot {
                    limit: max,
                    min_limit: max,
                    max_limit: max,
                    ..Snapshot::default()
                },
            }),
            changed: Notify::new(),
        }
    }

    /// Whether it governs (not switched off).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where it stands now.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.lock().snapshot
    }

    /// Time since a request through it last succeeded (or since it was made).
    pub(crate) fn since_success(&self) -> Duration {
        self.lock().last_success.elapsed()
    }

    /// Wait until a request may be sent, and hold its place in flight until the permit is
    /// dropped. `None` when `cancel` fired first. The wait is returned with the permit.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        cancel: &CancellationToken,
    ) -> Option<(Permit, Duration)> {
        let t0 = Instant::now();
        let mut waited = false;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let wake = {
                let mut st = self.lock();
                let now = Instant::now();
                match self.blocked_until(&st, now) {
                    Blocked::No => {
                        st.in_flight += 1;
                        st.snapshot.requests += 1;
                        if let Some(pace) = st.pace.filter(|_| self.enabled) {
                            // On schedule, not from now: a start woken late (a busy machine)
                            // leaves the next one less to wait, up to `CATCH_UP` starts.
                            let floor = now.checked_sub(pace * CATCH_UP).unwrap_or(now);
                            st.next_start =
                                Some(st.next_start.map_or(now, |n| n.max(floor)) + pace);
                        }
                        let wait = if waited {
                            now.saturating_duration_since(t0)
                        } else {
                            Duration::ZERO
                        };
                        if waited {
                            st.snapshot.waits += 1;
                            st.snapshot.wait += wait;
                        }
                        return Some((
                            Permit {
                                governor: self.clone(),
                                started: now,
                            },
                            wait,
                        ));
                    }
                    Blocked::Until(at) => Some(at),
                    Blocked::Full => None,
                }
            };
            waited = true;
            let sleep = async {
                match wake {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = &mut notified => {}
                _ = sleep => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }

    fn blocked_until(&self, st: &State, now: Instant) -> Blocked {
        let mut until = st.paused_until.filter(|at| *at > now);
        if self.enabled
            && let Some(next) = st.next_start.filter(|at| *at > now && st.pace.is_some())
        {
            until = Some(until.map_or(next, |u| u.max(next)));
        }
        if let Some(at) = until {
            return Blocked::Until(at);
        }
        if self.enabled && f64::from(st.in_flight) + 1.0 > st.limit.floor().max(1.0) {
            return Blocked::Full;
        }
        Blocked::No
    }

    /// Hold every request back for `d` from now (extends, never shortens, a current pause).
    pub(crate) fn pause(&self, d: Duration) {
        let at = Instant::now() + d.min(MAX_PAUSE);
        let mut st = self.lock();
        if st.paused_until.is_none_or(|cur| cur < at) {
            st.paused_until = Some(at);
        }
        // Paced starts resume one at a time after the pause, not all the ones it held back.
        if st.next_start.is_some_and(|n| n < at) {
            st.next_start = Some(at);
        }
        drop(st);
        self.changed.notify_waiters();
    }

    fn set_limit(&self, st: &mut State, limit: f64) {
        st.limit = limit.clamp(1.0, f64::from(self.max));
        st.acks = 0;
        let whole = st.limit.floor() as u32;
        st.snapshot.limit = whole;
        st.snapshot.min_limit = st.snapshot.min_limit.min(whole);
    }

    /// Lower the limit for a 429 or 529 of a request started at `started`: to half the
    /// requests in flight (or of the limit, when fewer are), once for all the requests that
    /// were already in flight when it was last lowered.
    fn decrease(&self, st: &mut State, started: Instant) {
        if !self.enabled || st.last_decrease.is_some_and(|at| started <= at) {
            return;
        }
        st.last_decrease = Some(Instant::now());
        let lowered = st.limit.min(f64::from(st.in_flight)) * DECREASE;
        self.set_limit(st, lowered);
    }
}

enum Blocked {
    No,
    Until(Instant),
    Full,
}

/// A request's place in flight; dropping it frees the place.
#[derive(Debug)]
pub(crate) struct Permit {
    governor: Arc<Governor>,
    started: Instant,
}

impl Permit {
    /// The response's headers came: its rate-limit headers pace the next requests.
    pub(crate) fn headers(&self, h: &RateLimitHeaders) {
        let g = &self.governor;
        if !g.enabled || h.is_empty() {
            return;
        }
        let mut st = g.lock();
        let r = h.requests;
        match (r.limit, r.remaining) {
            (Some(limit), Some(remaining)) if limit > 0 => {
                // Paced while fewer are left than could be sent at once: a burst of that many
                // would drain the bucket and meet 429s.
                let at_once = st.limit.floor().max(f64::from(st.in_flight));
                if (remaining as f64) < at_once {
                    // The bucket refills at `limit` per minute: one start per 60 s / limit.
                    st.pace = Some(Duration::from_secs_f64(60.0 * PACE_MARGIN / limit as f64));
                    if st.next_start.is_none() {
                        st.next_start = Some(self.started + st.pace.unwrap_or_default());
                    }
                } else {
                    st.pace = None;
                    st.next_start = None;
                }
            }
            _ => {}
        }
        drop(st);
        if h.tokens.exhausted() {
            let d = h.tokens.reset.unwrap_or(Duration::from_secs(1));
            g.pause(d.min(MAX_TOKENS_PAUSE));
        }
        g.changed.notify_waiters();
    }

    /// The request succeeded: one more may be in flight, a little at a time.
    pub(crate) fn succeeded(self) {
        let g = &self.governor;
        let mut st = g.lock();
        st.last_success = Instant::now();
        if g.enabled && st.limit < f64::from(g.max) {
            st.acks += 1;
            if f64::from(st.acks) >= st.limit.floor() {
                let raised = st.limit.floor() + 1.0;
                g.set_limit(&mut st, raised);
            }
        }
    }

    /// The request was rate limited (429): everyone waits `retry_after`, and fewer requests
    /// are in flight from now on.
    pub(crate) fn rate_limited(self, retry_after: Option<Duration>) {
        let g = &self.governor;
        {
            let mut st = g.lock();
            st.snapshot.rate_limited += 1;
            g.decrease(&mut st, self.started);
        }
        if let Some(d) = retry_after {
            g.pause(d);
        }
    }

    /// The model was overloaded (529): fewer requests are in flight from now on.
    pub(crate) fn overloaded(self) {
        let g = &self.governor;
        let mut st = g.lock();
        st.snapshot.overloaded += 1;
        g.decrease(&mut st, self.started);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut st = self.governor.lock();
        st.in_flight = st.in_flight.saturating_sub(1);
        drop(st);
        self.governor.changed.notify_waiters();
    }
}
