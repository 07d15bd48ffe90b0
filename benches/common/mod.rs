//! A tiny timing harness shared by the benches (no external crates): calibrate the batch size
//! to about `target` per sample, take several samples, report the median time per iteration.

#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Median of a slice of durations (sorted copy; upper median for even lengths).
pub fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[s.len() / 2]
}

/// Median of f64 values.
pub fn median_f64(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// Time `f` (one iteration per call): the median per-iteration time over `samples` samples of
/// about `target` each. Returns (median per iteration, iterations per sample).
pub fn time_per_iter(samples: usize, target: Duration, mut f: impl FnMut()) -> (Duration, u64) {
    // Warm up and calibrate.
    let mut n: u64 = 1;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        let e = t.elapsed();
        if e >= target / 4 || n >= 1 << 30 {
            let per = e.as_secs_f64() / n as f64;
            n = ((target.as_secs_f64() / per.max(1e-9)) as u64).max(1);
            break;
        }
        n *= 4;
    }
    let mut per_iter = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        per_iter.push(t.elapsed() / n as u32);
    }
    (median(&per_iter), n)
}

/// Pretty-print a duration with a sensible unit.
pub fn fmt_dur(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// A printed table: a header and rows of cells, columns padded.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Render as a Markdown table (readable in a terminal too).
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut w = vec![0usize; n];
        for r in std::iter::once(&self.header).chain(self.rows.iter()) {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| {
            let cells: Vec<String> = (0..n)
                .map(|i| {
                    let c = r.get(i).cloned().unwrap_or_default();
                    let pad = w[i] - c.chars().count();
                    format!("{c}{}", " ".repeat(pad))
                })
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.header);
        out.push_str(&format!(
            "|{}|\n",
            w.iter()
                .map(|x| "-".repeat(x + 2))
                .collect::<Vec<_>>()
                .join("|")
        ));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}
