//! `--timings`: where the turns' time went, by phase, as a table on stderr at the end of a
//! run, and the same totals as JUnit properties (`timing.*`).

use std::io::Write;

use crate::events::{RunResult, TimingTotals};

/// The turns' timing summed over `results`.
pub fn totals(results: &[RunResult]) -> TimingTotals {
    let mut t = TimingTotals::default();
    for r in results {
        t.turns = t.turns.saturating_add(r.timing.turns);
        t.wall_ms = t.wall_ms.saturating_add(r.timing.wall_ms);
        t.phases.add(&r.timing.phases);
    }
    t
}

/// The per-phase table for `results`: each phase's total, its mean per turn and its share of
/// the turns' wall time.
pub fn table(results: &[RunResult]) -> String {
    let t = totals(results);
    let turns = u64::from(t.turns.max(1));
    let share = |ms: u64| {
        if t.wall_ms == 0 {
            0.0
        } else {
            ms as f64 * 100.0 / t.wall_ms as f64
        }
    };
    let mut s = format!(
        "runner timings: {} turn(s) in {} task(s)\n{:<14} {:>12} {:>12} {:>7}\n",
        t.turns,
        results.iter().filter(|r| r.timing.turns > 0).count(),
        "phase",
        "total ms",
        "per turn ms",
        "share"
    );
    let rows = t
        .phases
        .named()
        .into_iter()
        .chain(std::iter::once(("turns (wall)", t.wall_ms)));
    for (name, ms) in rows {
        s.push_str(&format!(
            "{name:<14} {ms:>12} {:>12} {:>6.1}%\n",
            ms / turns,
            share(ms)
        ));
    }
    if let Some(line) = crate::report::rate_limit::line(results) {
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// Print [`table`] on stderr.
pub fn print_table(results: &[RunResult]) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(table(results).as_bytes());
    let _ = e.flush();
}

/// The `timing.*` JUnit properties of one task (none when it took no turn).
pub(crate) fn properties(r: &RunResult) -> Vec<(&'static str, String)> {
    let t = &r.timing;
    if t.is_empty() {
        return Vec::new();
    }
    let p = &t.phases;
    vec![
        ("timing.turns", t.turns.to_string()),
        ("timing.wall_ms", t.wall_ms.to_string()),
        ("timing.request_build_ms", p.request_build_ms.to_string()),
        ("timing.retry_ms", p.retry_ms.to_string()),
        ("timing.ttfb_ms", p.ttfb_ms.to_string()),
        ("timing.stream_ms", p.stream_ms.to_string()),
        ("timing.tools_ms", p.tools_ms.to_string()),
        ("timing.hooks_ms", p.hooks_ms.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::fixtures;

    #[test]
    fn the_table_has_a_row_per_phase_and_the_wall_time() {
        let a = fixtures::full_success();
        let mut b = fixtures::full_success();
        b.timing.wall_ms = 1000;
        b.timing.phases.tools_ms = 0;
        let table = table(&[a, b]);
        assert!(
            table.starts_with("runner timings: 4 turn(s) in 2 task(s)\n"),
            "{table}"
        );
        let tools = table.lines().find(|l| l.starts_with("tools ")).unwrap();
        // 1050 in all, 262 per turn, 1050 / 5000.
        assert!(
            tools.contains(" 1050 ") && tools.contains(" 262 ") && tools.ends_with("21.0%"),
            "{tools}"
        );
        assert!(table.lines().last().unwrap().starts_with("turns (wall)"));
        assert_eq!(table.lines().count(), 9);
    }
}
