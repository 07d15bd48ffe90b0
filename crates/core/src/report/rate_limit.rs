//! What the rate-limit governor did over a run, from the tasks' results alone: the JUnit
//! `rate_limit.*` properties of one task, and the batch's line (stderr at the end of a batch,
//! the `--timings` table, the GitHub step summary).

use crate::events::RunResult;

/// The governor's figures summed over a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchRateLimit {
    /// Tasks it held back or that met a 429 or 529.
    pub tasks: usize,
    /// Rate-limited responses (429).
    pub rate_limited: u64,
    /// Overloaded responses (529).
    pub overloaded: u64,
    /// Requests that waited for the governor.
    pub waits: u64,
    /// All the tasks' governor waits, summed (milliseconds).
    pub wait_ms: u64,
    /// The lowest in-flight limit the governor set.
    pub min_limit: u32,
    /// Its ceiling (`--jobs`).
    pub max_limit: u32,
}

/// The governor's figures over `results`, `None` when it never acted.
pub fn batch(results: &[RunResult]) -> Option<BatchRateLimit> {
    let acted: Vec<_> = results
        .iter()
        .map(|r| r.rate_limit)
        .filter(|t| !t.is_empty())
        .collect();
    if acted.is_empty() {
        return None;
    }
    let mut b = BatchRateLimit {
        tasks: acted.len(),
        min_limit: u32::MAX,
        ..BatchRateLimit::default()
    };
    for t in acted {
        b.rate_limited = b.rate_limited.saturating_add(t.rate_limited);
        b.overloaded = b.overloaded.saturating_add(t.overloaded);
        b.waits = b.waits.saturating_add(t.waits);
        b.wait_ms = b.wait_ms.saturating_add(t.wait_ms);
        b.min_limit = b.min_limit.min(t.min_limit);
        b.max_limit = b.max_limit.max(t.max_limit);
    }
    Some(b)
}

/// One sentence for the batch, `None` when the governor never acted.
pub fn line(results: &[RunResult]) -> Option<String> {
    let b = batch(results)?;
    Some(format!(
        "rate-limit governor: {} rate-limited (429) and {} overloaded (529) response(s); {} request(s) waited {:.1} s in all (not charged to the tasks' budgets); requests in flight went down to {} of {} ({} task(s) affected)",
        b.rate_limited,
        b.overloaded,
        b.waits,
        b.wait_ms as f64 / 1000.0,
        b.min_limit,
        b.max_limit,
        b.tasks
    ))
}

/// The `rate_limit.*` JUnit properties of one task (none when the governor never acted on it).
pub(crate) fn properties(r: &RunResult) -> Vec<(&'static str, String)> {
    let t = &r.rate_limit;
    if t.is_empty() {
        return Vec::new();
    }
    vec![
        ("rate_limit.rate_limited", t.rate_limited.to_string()),
        ("rate_limit.overloaded", t.overloaded.to_string()),
        ("rate_limit.waits", t.waits.to_string()),
        ("rate_limit.wait_ms", t.wait_ms.to_string()),
        ("rate_limit.limit", t.limit.to_string()),
        ("rate_limit.min_limit", t.min_limit.to_string()),
        ("rate_limit.max_limit", t.max_limit.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::fixtures;
    use crate::governor::RateLimitTally;

    #[test]
    fn sums_over_the_tasks_it_acted_on() {
        let quiet = fixtures::full_success();
        assert_eq!(batch(std::slice::from_ref(&quiet)), None);
        assert!(properties(&quiet).is_empty());
        let mut a = fixtures::full_success();
        a.rate_limit = RateLimitTally {
            waits: 2,
            wait_ms: 1500,
            rate_limited: 3,
            overloaded: 0,
            limit: 6,
            min_limit: 4,
            max_limit: 16,
        };
        let mut b = a.clone();
        b.rate_limit.min_limit = 2;
        b.rate_limit.overloaded = 1;
        let sum = batch(&[a.clone(), quiet, b]).unwrap();
        assert_eq!(
            sum,
            BatchRateLimit {
                tasks: 2,
                rate_limited: 6,
                overloaded: 1,
                waits: 4,
                wait_ms: 3000,
                min_limit: 2,
                max_limit: 16
            }
        );
        let props = properties(&a);
        assert!(props.contains(&("rate_limit.rate_limited", "3".into())));
        assert!(props.contains(&("rate_limit.min_limit", "4".into())));
        let l = line(&[a]).unwrap();
        assert!(
            l.contains("3 rate-limited (429)") && l.contains("down to 4 of 16"),
            "{l}"
        );
    }
}
