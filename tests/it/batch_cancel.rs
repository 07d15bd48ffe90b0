//! End-to-end: a batch cancelled the way a CI service cancels a job (GitHub Actions sends
//! SIGINT, SIGTERM 7.5 s later and SIGKILL 2.5 s after that; here the gaps are compressed).
//! The batch stops preparing worktrees at the first signal, also in the middle of a full
//! checkout, and exits within 2 s of the SIGTERM with every report written; the tasks that
//! never started are `not_started`, keep no worktree, and run again under `--skip-passed`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::support::*;

/// Files in the repository of the checkout-mode tests: a full checkout of it takes long
/// enough that a batch which keeps making them cannot end in time.
const FILES: usize = 4000;

/// Tasks of the checkout-mode tests (`--jobs 2`: two start, the others wait for a worktree).
const TASKS: usize = 24;

/// How long a batch may take to exit after the SIGTERM.
const EXIT_LIMIT: Duration = Duration::from_secs(2);

fn stalled() -> MockTurn {
    MockTurn::Stall {
        events: Resp::new().text("slow answer").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }
}

/// A repository of [`FILES`] files in directories of 100.
fn big_repo() -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..FILES {
        let rel = format!("src/d{:02}/f{i:04}.txt", i / 100);
        std::fs::create_dir_all(repo.path().join(rel.rsplit_once('/').unwrap().0)).unwrap();
        std::fs::write(repo.path().join(&rel), format!("file {i}\n").repeat(20)).unwrap();
    }
    repo.commit_all("many files");
    repo
}

/// Specs `names` in `repo/tasks`, working at the repository's root, committed.
fn specs(repo: &TestRepo, names: &[String]) -> PathBuf {
    let dir = repo.path().join("tasks");
    std::fs::create_dir_all(&dir).unwrap();
    for n in names {
        write_spec_named(&dir, &format!("{n}.yaml"), &named_task(n, "workdir: ..\n"));
    }
    repo.commit_all("task specs");
    dir
}

/// The `result.json` files under the transcript directory `dir`, by task.
fn result_files(dir: &Path) -> std::collections::HashMap<String, Value> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("result.json"))
        .filter(|p| p.exists())
        .map(|p| {
            let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            (v["task"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

/// The slot directories of the batch directories in the pool `pool` (`<batch>/s<N>`).
fn slots(pool: &Path) -> Vec<PathBuf> {
    let Ok(batches) = std::fs::read_dir(pool) else {
        return Vec::new();
    };
    batches
        .flatten()
        .filter(|b| b.path().is_dir())
        .flat_map(|b| std::fs::read_dir(b.path()).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().starts_with('s'))
        .collect()
}

/// Send `signals` to `started`, each after its pause, and wait for it to exit; panics unless it
/// exits within [`EXIT_LIMIT`] of the last one.
fn signal_and_wait(started: Started, signals: &[(Duration, Signal)]) -> Run {
    let mut last = Instant::now();
    for (pause, signal) in signals {
        std::thread::sleep(*pause);
        last = Instant::now();
        started.signal(*signal);
    }
    // The CI service's SIGKILL comes 2.5 s after its SIGTERM.
    let run = match started.wait_within(Duration::from_millis(2500)) {
        Ok(run) => run,
        Err(run) => panic!(
            "runner still ran {:?} after the last signal and was killed\n--- stderr\n{}",
            last.elapsed(),
            run.stderr
        ),
    };
    let took = last.elapsed();
    assert!(
        took < EXIT_LIMIT,
        "exited {took:?} after the last signal\n--- stderr\n{}",
        run.stderr
    );
    run
}

/// Start a batch of [`TASKS`] tasks over [`big_repo`], `--jobs 2`, its worktrees made as
/// `mode` says (`RUNNER_WORKTREES`), wait until the first two tasks wait on the model, then
/// send `signals` (each after its pause) and check that it exits within [`EXIT_LIMIT`] of the
/// last, with every report written.
fn cancel_a_batch(mode: &str, signals: &[(Duration, Signal)], code: i32) {
    let repo = big_repo();
    let out = OutDir::new();
    let names: Vec<String> = (0..TASKS).map(|i| format!("t{i:02}")).collect();
    let dir = specs(&repo, &names);
    // Only the two tasks that start ever ask the model.
    let mock = MockAnthropic::start(vec![stalled(), stalled()]);
    let started = exec(&mock, &repo, &out)
        .env("RUNNER_WORKTREES", mode)
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", "120000")
        .args(["--jobs", "2"])
        .junit(out.junit())
        .json()
        .arg(&dir)
        .spawn();
    assert!(
        mock.wait_for_requests(2, Duration::from_secs(60)),
        "the first two tasks never asked the model"
    );
    let run = signal_and_wait(started, signals);
    run.expect_code(code);

    // Every task has its result on stdout and in the JUnit report: the two that started are
    // interrupted, the others never started.
    let results = run.json();
    assert_eq!(results.len(), TASKS, "{}", run.stderr);
    let outcome = |r: &Value| r["runner_outcome"].as_str().unwrap().to_string();
    let started_tasks: Vec<&Value> = results
        .iter()
        .filter(|r| outcome(r) == "interrupted")
        .collect();
    assert_eq!(started_tasks.len(), 2, "{results:?}");
    for r in results.iter().filter(|r| outcome(r) != "interrupted") {
        assert_eq!(outcome(r), "not_started", "{r}");
        assert!(r["runner_git"].is_null(), "no worktree, no patch: {r}");
    }
    let xml = std::fs::read_to_string(out.junit()).expect("the JUnit report is written");
    assert_eq!(xml.matches("<testcase ").count(), TASKS, "{xml}");
    assert_eq!(xml.matches("<skipped ").count(), TASKS - 2, "{xml}");
    assert_eq!(
        xml.matches("<error type=\"interrupted\"").count(),
        2,
        "{xml}"
    );
    assert_junit_valid(&out.junit());
    // Each started task wrote its result.json and kept its worktree for resume; no other
    // worktree is left.
    let files = result_files(&out.transcripts());
    assert_eq!(files.len(), 2, "{files:?}");
    for r in &started_tasks {
        let name = r["runner_task"].as_str().unwrap();
        assert_eq!(files[name]["outcome"], "interrupted");
        assert!(r["runner_git"]["worktree"].is_string(), "{r}");
    }
    let kept = slots(&out.transcripts().join(".worktrees"));
    assert_eq!(kept.len(), 2, "{kept:?}");
    mock.assert_clean();
}

/// GitHub's cancel sequence: SIGINT, then SIGTERM.
#[test]
fn sigint_then_sigterm_ends_a_checkout_batch_within_two_seconds() {
    cancel_a_batch(
        "checkout",
        &[
            (Duration::from_millis(200), Signal::SIGINT),
            (Duration::from_millis(750), Signal::SIGTERM),
        ],
        130,
    );
}

/// A lone SIGTERM (a container being stopped).
#[test]
fn a_lone_sigterm_ends_a_checkout_batch_within_two_seconds() {
    cancel_a_batch(
        "checkout",
        &[(Duration::from_millis(200), Signal::SIGTERM)],
        143,
    );
}

/// The same in the default mode: overlay worktrees where runner may mount (root), else
/// checkouts.
#[test]
fn a_lone_sigterm_ends_a_batch_within_two_seconds_in_the_default_mode() {
    cancel_a_batch(
        "auto",
        &[(Duration::from_millis(200), Signal::SIGTERM)],
        143,
    );
}

/// A signal while the pool is still making its first checkouts: they stop part way, the tasks
/// waiting for them never start, and nothing of the pool is left.
#[test]
fn a_signal_stops_the_checkouts_being_made() {
    let repo = big_repo();
    let out = OutDir::new();
    let names: Vec<String> = (0..TASKS).map(|i| format!("t{i:02}")).collect();
    let dir = specs(&repo, &names);
    let mock = MockAnthropic::start(vec![]);
    let started = exec(&mock, &repo, &out)
        .env("RUNNER_WORKTREES", "checkout")
        .args(["--jobs", "2"])
        .junit(out.junit())
        .json()
        .arg(&dir)
        .spawn();
    // A checkout has begun writing files.
    let pool = out.transcripts().join(".worktrees");
    wait_until("a checkout being made", || {
        slots(&pool)
            .iter()
            .any(|s| std::fs::read_dir(s.join("tree/src")).is_ok_and(|mut d| d.next().is_some()))
    });
    let run = signal_and_wait(started, &[(Duration::ZERO, Signal::SIGTERM)]);
    run.expect_code(143);
    assert!(
        run.stderr.contains("checkout stopped part way"),
        "{}",
        run.stderr
    );
    let results = run.json();
    assert_eq!(results.len(), TASKS, "{}", run.stderr);
    for r in &results {
        assert_eq!(r["runner_outcome"], "not_started", "{r}");
        assert_eq!(r["runner_exit_code"], 0, "{r}");
        assert!(
            r["runner_skip_reason"]
                .as_str()
                .unwrap()
                .contains("interrupted by SIGTERM"),
            "{r}"
        );
    }
    let xml = std::fs::read_to_string(out.junit()).expect("the JUnit report is written");
    assert_eq!(xml.matches("<skipped ").count(), TASKS, "{xml}");
    assert!(result_files(&out.transcripts()).is_empty());
    // The checkouts were abandoned and removed with the pool: nothing is left.
    assert!(!pool.exists(), "{:?}", slots(&pool));
    assert_eq!(mock.served(), 0);
}

/// `--jobs 1`: `a` passes, SIGINT while `b` waits on the model, `c` never starts. `c` is
/// `not_started` (a `skipped`-like result frame and JUnit `<skipped>`, no worktree) and the
/// run exits 130; the next run with `--skip-passed` skips `a` and runs `b` and `c`, and its
/// batch leaves the worktree kept for `b`'s resume alone.
#[test]
fn tasks_a_signal_kept_from_starting_run_again_with_skip_passed() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let dir = specs(&repo, &names);
    let mock = MockAnthropic::start(vec![text_turn("done"), stalled()]);
    let started = exec(&mock, &repo, &out)
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", "120000")
        .args(["--jobs", "1"])
        .junit(out.junit())
        .stream_json()
        .arg(&dir)
        .spawn();
    assert!(mock.wait_for_requests(2, Duration::from_secs(60)));
    let run = signal_and_wait(started, &[(Duration::from_millis(200), Signal::SIGINT)]);
    run.expect_code(130);
    let results: std::collections::HashMap<String, Value> = run
        .json()
        .into_iter()
        .filter(|f| f["type"] == "result")
        .map(|r| (r["runner_task"].as_str().unwrap().to_string(), r))
        .collect();
    assert_eq!(results["a"]["runner_outcome"], "success");
    assert_eq!(results["b"]["runner_outcome"], "interrupted");
    let kept = PathBuf::from(results["b"]["runner_git"]["worktree"].as_str().unwrap());
    assert!(kept.is_dir());
    let c = &results["c"];
    assert_eq!(c["runner_outcome"], "not_started", "{c}");
    assert_eq!(c["subtype"], "error_during_execution");
    assert_eq!(c["terminal_reason"], "skipped");
    assert_eq!(c["runner_exit_code"], 0);
    assert_eq!(
        c["runner_skip_reason"],
        "not started: the batch was interrupted by SIGINT before this task started"
    );
    assert!(c["runner_git"].is_null(), "no worktree: {c}");
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(xml.contains("<skipped type=\"not_started\""), "{xml}");
    assert_junit_valid(&out.junit());
    mock.assert_clean();

    let mock2 = MockAnthropic::start(vec![text_turn("done"), text_turn("done")]);
    let run2 = exec(&mock2, &repo, &out)
        .args(["--jobs", "1", "--skip-passed"])
        .arg(out.transcripts())
        .json()
        .arg(&dir)
        .run();
    run2.expect_code(0);
    let outcomes: Vec<(String, String)> = run2
        .json()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("runner_task"), s("runner_outcome"))
        })
        .collect();
    let want = [("a", "skipped"), ("b", "success"), ("c", "success")]
        .map(|(t, o)| (t.to_string(), o.to_string()));
    assert_eq!(outcomes, want);
    assert!(kept.is_dir(), "the worktree kept for resume is still there");
    mock2.assert_clean();
}
