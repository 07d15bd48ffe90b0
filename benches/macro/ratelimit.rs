//! (7) The batch under a rate limit: `BENCH_RL_TASKS` one-turn tasks (default 1000) at
//! `--jobs BENCH_RL_JOBS` (64) against the token-bucket mock (`runner-test-support`'s `mock_bucket.rs`:
//! real 429 bodies, `retry-after`, `anthropic-ratelimit-requests-*`), with the rate-limit
//! governor on and off (`RUNNER_RATE_GOVERNOR=off`: each task retries its 429s on its own
//! schedule under the default `retry:` settings). Reported: wall time, throughput (admitted
//! requests per second from the first request to the last admitted one) against the bucket's
//! rate, tasks lost (not `success`), 429s, runner's peak RSS and CPU time.
//!
//! `BENCH_RL_RATE` (requests per second, default 20), `BENCH_RL_BURST` (default 10) and
//! `BENCH_RL_LATENCY_MS` (default 50) shape the bucket; `BENCH_RL_MODES` (default `on,off`)
//! picks the runs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{self, BucketConfig, MockBucket};
use crate::{env_usize, load_average, max_rss_kb};

/// Write `n` one-turn task specs into `dir`, each working in a directory of its own.
fn write_specs(dir: &Path, n: usize) {
    for i in 0..n {
        let w = dir.join(format!("w{i:04}"));
        std::fs::create_dir_all(&w).unwrap();
        support::write_spec_named(
            dir,
            &format!("t{i:04}.yaml"),
            &format!(
                "name: t{i:04}\nprompt: say done\nmodel: claude-sonnet-4-5\nworkdir: w{i:04}\ntools: []\n"
            ),
        );
    }
}

/// User + system CPU seconds from `/usr/bin/time -v` output.
fn cpu_secs(time_stderr: &str) -> f64 {
    let field = |name: &str| {
        time_stderr
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    field("User time (seconds)") + field("System time (seconds)")
}

pub fn bench_rate_limit() {
    let tasks = env_usize("BENCH_RL_TASKS", 1000);
    let jobs = env_usize("BENCH_RL_JOBS", 64);
    let rate = env_usize("BENCH_RL_RATE", 20) as f64;
    let burst = env_usize("BENCH_RL_BURST", 10) as f64;
    let latency = Duration::from_millis(env_usize("BENCH_RL_LATENCY_MS", 50) as u64);
    let modes = std::env::var("BENCH_RL_MODES").unwrap_or_else(|_| "on,off".into());
    println!(
        "## (7) rate limit: {tasks} one-turn tasks at --jobs {jobs}, bucket {rate}/s (burst {burst}), {} ms per answer\n",
        latency.as_millis()
    );
    println!(
        "| governor | wall | throughput | of the bucket's rate | tasks lost | 429s | peak RSS | CPU | load |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let specs = tempfile::tempdir().unwrap();
    write_specs(specs.path(), tasks);
    for mode in modes.split(',').map(str::trim) {
        let mock = MockBucket::start(BucketConfig {
            rate,
            burst,
            latency,
        });
        let out_dir = tempfile::tempdir().unwrap();
        let base = support::runner_std_cmd();
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-v").arg(base.get_program());
        for (k, v) in base.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.env("ANTHROPIC_BASE_URL", mock.url())
            .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", "30000")
            .env("RUNNER_PROGRESS", "0")
            .env("RUNNER_RATE_GOVERNOR", mode)
            .current_dir(specs.path())
            .arg("exec")
            .arg(specs.path())
            .args(["--jobs", &jobs.to_string(), "--output-format", "json", "-q"])
            .arg("--transcript-dir")
            .arg(out_dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let load = load_average();
        let t0 = Instant::now();
        let out = cmd.output().expect("spawn runner");
        let wall = t0.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let results = support::json_lines(&out.stdout);
        let succeeded = results
            .iter()
            .filter(|r| r["runner_outcome"] == "success")
            .count();
        let stats = mock.stats();
        let first = stats
            .admitted
            .iter()
            .chain(&stats.refused)
            .min()
            .copied()
            .unwrap_or_default();
        let last = stats.admitted.iter().max().copied().unwrap_or_default();
        let span = (last - first).as_secs_f64().max(1e-3);
        let throughput = stats.admitted.len() as f64 / span;
        println!(
            "| {mode} | {:.1} s | {throughput:.1}/s | {:.0} % | {} of {tasks} | {} | {:.1} MB | {:.1} s | {} |",
            wall.as_secs_f64(),
            throughput * 100.0 / rate,
            tasks - succeeded,
            stats.refused.len(),
            max_rss_kb(&stderr).unwrap_or(0) as f64 / 1024.0,
            cpu_secs(&stderr),
            load.split(' ').next().unwrap_or("?"),
        );
        if succeeded < tasks {
            let mut why: Vec<String> = results
                .iter()
                .filter(|r| r["runner_outcome"] != "success")
                .map(|r| format!("{}: {}", r["runner_outcome"], r["errors"][0]))
                .collect();
            why.sort();
            why.dedup();
            for w in why.iter().take(3) {
                println!("  lost: {w}");
            }
        }
    }
    println!();
}
