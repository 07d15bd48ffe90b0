//! The batch-wide rate-limit governor, through the real binary against a token-bucket mock
//! that answers 429 with the API's real body and headers: a 429 storm loses no task (even with
//! `retry.max_retries: 0`) and lowers the requests in flight; one task's 429 and the
//! rate-limit headers pace the other tasks; waits on the governor are not charged to a
//! task's `limits.timeout` or `retry:` budget. `RUNNER_RATE_GOVERNOR=off` shows the same
//! batch failing without it.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

fn task(name: &str, extra: &str) -> String {
    format!("name: {name}\nprompt: \"say done\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// Write `n` task specs with `extra` into a directory outside any git repository, each task
/// working in a directory of its own; kept as long as the returned guard.
fn tasks(n: usize, extra: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tasks");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        std::fs::create_dir_all(dir.join(format!("w{i:02}"))).unwrap();
        write_spec_named(
            &dir,
            &format!("t{i:02}.yaml"),
            &task(&format!("t{i:02}"), &format!("workdir: w{i:02}\n{extra}")),
        );
    }
    (tmp, dir)
}

/// `runner exec --jobs JOBS --json --junit OUT/junit.xml DIR`, the governor on or off.
fn batch(
    mock: &MockBucket,
    repo: &TestRepo,
    out: &OutDir,
    dir: &Path,
    jobs: u32,
    governor: bool,
) -> Run {
    let mut r = exec(mock, repo, out)
        .args(["--jobs", &jobs.to_string()])
        .json()
        .junit(out.junit())
        .arg(dir);
    if !governor {
        r = r.env("RUNNER_RATE_GOVERNOR", "off");
    }
    r.run()
}

fn outcomes(run: &Run) -> Vec<String> {
    run.json()
        .iter()
        .map(|r| r["runner_outcome"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The value of JUnit property `name` in every testsuite that has it.
fn properties(junit: &Path, name: &str) -> Vec<u64> {
    let xml = std::fs::read_to_string(junit).unwrap();
    let pat = format!("<property name=\"{name}\" value=\"");
    xml.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &xml[i + pat.len()..];
            rest[..rest.find('"')?].parse().ok()
        })
        .collect()
}

#[test]
fn a_429_storm_loses_no_task_and_lowers_the_requests_in_flight() {
    let config = BucketConfig {
        rate: 10.0,
        burst: 2.0,
        latency: Duration::from_millis(50),
    };
    let repo = TestRepo::new();
    // Not one retry of its own: only the governor can carry a task through a 429.
    let (_tmp, dir) = tasks(12, "retry:\n  max_retries: 0\n");
    let mock = MockBucket::start(config);
    let out = OutDir::new();
    let run = batch(&mock, &repo, &out, &dir, 6, true);
    run.expect_code(0);
    assert_eq!(
        outcomes(&run),
        vec!["success"; 12],
        "stderr: {}",
        run.stderr
    );
    let stats = mock.stats();
    assert_eq!(stats.admitted.len(), 12);
    assert!(
        !stats.refused.is_empty(),
        "the burst of 6 meets a bucket of 2"
    );
    let min_limit = properties(&out.junit(), "rate_limit.min_limit");
    assert!(
        !min_limit.is_empty(),
        "rate_limit.* properties in the JUnit report"
    );
    assert!(min_limit.iter().all(|l| *l < 6), "{min_limit:?}");
    let limited: u64 = properties(&out.junit(), "rate_limit.rate_limited")
        .iter()
        .sum();
    assert_eq!(limited as usize, stats.refused.len());
    let results = run.json();
    let limited: Vec<&Value> = results
        .iter()
        .filter(|r| r.get("runner_rate_limit").is_some())
        .collect();
    assert!(!limited.is_empty());
    assert!(
        limited
            .iter()
            .all(|r| r["runner_rate_limit"]["max_limit"] == 6)
    );
    assert_junit_valid(&out.junit());

    // The same batch without the governor: each task's 429 is one of its own retries, and
    // with none allowed the tasks that met the limit fail.
    let mock = MockBucket::start(config);
    let out = OutDir::new();
    let run = batch(&mock, &repo, &out, &dir, 6, false);
    assert_eq!(run.code, Some(4), "stderr: {}", run.stderr);
    assert!(outcomes(&run).iter().any(|o| o == "api_error"));
}

#[test]
fn one_tasks_429_and_the_rate_limit_headers_pace_the_other_tasks() {
    // 2 requests a second, a burst of 1: the first request drains the bucket.
    let mock = MockBucket::start(BucketConfig {
        rate: 2.0,
        burst: 1.0,
        latency: Duration::ZERO,
    });
    let repo = TestRepo::new();
    let (_tmp, dir) = tasks(4, "retry:\n  max_retries: 0\n");
    let out = OutDir::new();
    let run = batch(&mock, &repo, &out, &dir, 4, true);
    run.expect_code(0);
    let stats = mock.stats();
    assert_eq!(stats.admitted.len(), 4);
    // After the first burst, the others are sent one at a time at the bucket's rate (limit 120
    // a minute: one every 500 ms), not all together when their retry-after ends.
    let gaps: Vec<u128> = stats
        .admitted
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect();
    assert!(
        gaps.iter().all(|g| *g >= 400),
        "gaps between admitted requests: {gaps:?}"
    );
    assert!(
        stats.refused.len() <= 4,
        "after the first round of 429s, pacing leaves few: {:?}",
        stats.refused
    );
    let first_429 = stats.refused[0];
    assert!(
        stats.admitted[1] >= first_429 + Duration::from_millis(900),
        "nothing is sent before the 429's retry-after (1 s) ends: {stats:?}"
    );
}

#[test]
fn waiting_on_the_governor_is_not_charged_to_the_tasks_budgets() {
    // One request every 2.5 s: the first answer's headers (24 a minute, none left) hold the
    // second task's request back for 2.5 s.
    let config = BucketConfig {
        rate: 0.4,
        burst: 1.0,
        latency: Duration::ZERO,
    };
    let repo = TestRepo::new();
    let extra = "limits:\n  timeout: 2s\nretry:\n  max_retries: 0\n  budget: 1s\n";
    let (_tmp, dir) = tasks(2, extra);
    let mock = MockBucket::start(config);
    let out = OutDir::new();
    let run = batch(&mock, &repo, &out, &dir, 2, true);
    run.expect_code(0);
    let results = run.json();
    let waited: Vec<&Value> = results
        .iter()
        .filter(|r| r.get("runner_rate_limit").is_some())
        .collect();
    assert_eq!(waited.len(), 1, "{results:?}");
    let r = waited[0];
    assert_eq!(r["runner_outcome"], "success");
    assert_eq!(r["num_turns"], 1);
    let wait_ms = r["runner_rate_limit"]["wait_ms"].as_u64().unwrap();
    assert!(wait_ms >= 2500, "{r}");
    assert!(
        r["duration_ms"].as_u64().unwrap() > 2000,
        "ran past its 2 s timeout, the governor's wait left out: {r}"
    );

    // Without the governor the second task is sent at once, meets a 429, and may not retry.
    let mock = MockBucket::start(config);
    let out = OutDir::new();
    let run = batch(&mock, &repo, &out, &dir, 2, false);
    assert_eq!(run.code, Some(4), "stderr: {}", run.stderr);
}
