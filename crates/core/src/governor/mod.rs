//! The batch-wide rate-limit governor: every task of a process that calls one provider with
//! one key shares a [`Governor`], so a batch bends under the API's rate limit together
//! instead of each task retrying on its own schedule.
//!
//! - A 429 or 529 halves the number of requests allowed in flight (at most once per round of
//!   requests in flight); each success raises it by `1/limit` (additive increase) up to
//!   `--jobs`.
//! - A 429's `retry-after` holds back every task's next request, and the requests limit's
//!   headers (`anthropic-ratelimit-requests-*`, `x-ratelimit-*-requests`) pace request starts
//!   at the bucket's refill rate once fewer are left than the limit would start at once; an
//!   exhausted token limit pauses everyone.
//! - A task is not charged for the governor: its waits do not count against `retry.budget` or
//!   `limits.timeout`, and its 429s not against `retry.max_retries` (see [`TaskGovernor`]).
//!
//! `RUNNER_RATE_GOVERNOR=off` switches the limit, the pacing and the free retries off (each
//! task retries 429s under its own `retry:` settings, with a 429's wait still pausing all), to
//! compare.
//!
//! - `limiter`: one governor; `task`: a task's handle on it and what it was charged.

mod limiter;
mod task;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub(crate) use limiter::{Governor, Permit};
pub use task::RateLimitTally;
pub(crate) use task::{TaskGovernor, sleep_excluding};

/// A task gives up on a rate limit when no request through its governor has succeeded for
/// this long: a limit that does not clear by waiting.
pub(crate) const STALLED_AFTER: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// The environment variable that switches the governor off (`off`, `0` or `false`).
pub const ENV_GOVERNOR: &str = "RUNNER_RATE_GOVERNOR";

/// Whether `value` of [`ENV_GOVERNOR`] leaves the governor on.
fn enabled_by(value: Option<&str>) -> bool {
    !matches!(
        value.map(|v| v.trim().to_ascii_lowercase()).as_deref(),
        Some("off" | "0" | "false" | "no")
    )
}

/// The governors of one process, one per provider and key.
#[derive(Debug)]
pub struct Governors {
    max: u32,
    enabled: bool,
    by_key: Mutex<BTreeMap<String, Arc<Governor>>>,
}

impl Governors {
    /// Governors that allow `max` requests in flight at most (the batch's `--jobs`), on
    /// unless the environment switches them off.
    pub fn new(max: u32) -> Self {
        Self::with(max, enabled_by(std::env::var(ENV_GOVERNOR).ok().as_deref()))
    }

    /// Governors switched on or off explicitly.
    pub(crate) fn with(max: u32, enabled: bool) -> Self {
        Governors {
            max,
            enabled,
            by_key: Mutex::new(BTreeMap::new()),
        }
    }

    /// The governor of `key` (provider, endpoint and a digest of the API key), made on first
    /// use.
    pub(crate) fn get(&self, key: &str) -> Arc<Governor> {
        let mut map = self.by_key.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key.to_string())
            .or_insert_with(|| Arc::new(Governor::new(self.max, self.enabled)))
            .clone()
    }
}

/// The key of a provider's governor: its name, its endpoint and a short digest of its API key
/// (never the key itself), so that tasks with different keys do not share a limit.
pub(crate) fn key(provider: &str, base_url: &str, api_key: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(api_key.as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!(
        "{provider} {} key:{short}",
        base_url.trim().trim_end_matches('/')
    )
}

#[cfg(test)]
mod tests;
