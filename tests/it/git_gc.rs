//! End-to-end: `git gc --prune=now` run over and over in the repository while a batch works in
//! it. Each task starts from a snapshot of a working tree with uncommitted changes (a commit
//! nothing but runner's own reference holds while the task runs) and commits on a branch of
//! its own. Every task that succeeds has a branch whose commits and trees can be read in
//! full; a task that fails says a concurrent `git gc --prune` may be the cause; no branch is
//! left pointing at objects that are gone, and runner's temporary references are gone too.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use crate::support::*;

/// `git gc --prune=now` in `dir` until `stop` is set; returns how many ran.
fn gc_until(dir: &Path, stop: &AtomicBool) -> usize {
    let mut runs = 0;
    while !stop.load(Ordering::Relaxed) {
        // Its own failures (another gc's lock) do not matter here.
        let _ = Command::new("git")
            .args(["gc", "--prune=now", "--quiet"])
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        runs += 1;
    }
    runs
}

/// The objects reachable from `rev` that are missing (`git rev-list --objects
/// --missing=print`), or why they cannot be listed.
fn missing_objects(repo: &TestRepo, rev: &str) -> Result<Vec<String>, String> {
    let out = Command::new("git")
        .args(["rev-list", "--objects", "--missing=print", rev])
        .current_dir(repo.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('?'))
        .map(String::from)
        .collect())
}

/// Run alone by `.ci/run` (`cargo test --test it git_gc:: -- --ignored`), not beside the rest
/// of the suite: `--prune=now` deletes whatever was unreachable when a gc *started*, so a gc
/// slowed down by a loaded machine for longer than a task runs can still remove an object
/// after runner checked it (the documented limit in reliability.md, "Concurrent `git gc`").
#[test]
#[ignore = "a timing stress test: .ci/run runs it alone"]
fn a_batch_survives_git_gc_prune_now_running_beside_it() {
    let repo = TestRepo::new();
    repo.write("dirty.txt", "committed\n");
    let tasks = repo.path().join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    let names = ["g1", "g2", "g3"];
    let extra = "workdir: ..\npermissions:\n  mode: bypassPermissions\ngit:\n  isolate: true\n  base: working-tree\n  branch: true\n";
    for n in names {
        write_spec_named(&tasks, &format!("{n}.yaml"), &named_task(n, extra));
    }
    repo.commit_all("tasks");
    // Uncommitted: each task's base is a snapshot commit no branch reaches.
    repo.write("dirty.txt", "uncommitted\n");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = OutDir::new();
    // --jobs 1: each task gets its tool turn, then its answer. The command outlasts a second,
    // so that prunes run while the task works.
    let mut turns = Vec::new();
    for _ in names {
        turns.push(tool_turn(
            "toolu_1",
            "Bash",
            json!({"command": "echo made > made.txt && sleep 1.5"}),
        ));
        turns.push(text_turn("done"));
    }
    let mock = MockAnthropic::start(turns);

    let stop = Arc::new(AtomicBool::new(false));
    let gc = {
        let (dir, stop) = (repo.path().to_path_buf(), stop.clone());
        std::thread::spawn(move || gc_until(&dir, &stop))
    };
    let run = exec(&mock, &repo, &out)
        .args(["--jobs", "1"])
        .json()
        .arg(&tasks)
        .run();
    stop.store(true, Ordering::Relaxed);
    let prunes = gc.join().unwrap();
    assert!(prunes > 1, "git gc ran {prunes} time(s) during the batch");

    let results = run.json();
    assert_eq!(results.len(), names.len(), "{}", run.stderr);
    let mut succeeded = 0;
    for r in &results {
        let task = r["runner_task"].as_str().unwrap();
        if r["runner_outcome"] == "success" {
            succeeded += 1;
            let branch = r["runner_git"]["branch"].as_str().unwrap_or_else(|| {
                panic!("{task} succeeded without a branch: {r}");
            });
            assert_eq!(branch, format!("runner/{task}"));
            // The branch commit, the snapshot commit under it, and HEAD's.
            assert_eq!(
                repo.git(&["rev-parse", &format!("{branch}~2")]).trim(),
                head
            );
            assert_eq!(repo.git(&["show", &format!("{branch}:made.txt")]), "made\n");
            assert_eq!(
                repo.git(&["show", &format!("{branch}:dirty.txt")]),
                "uncommitted\n"
            );
        } else {
            // A loss runner could not prevent is reported as such.
            let msg = r["errors"].to_string();
            assert_eq!(r["runner_outcome"], "agent_error", "{task}: {r}");
            assert!(
                msg.contains("git gc --prune"),
                "{task}: {msg}\n{}",
                run.stderr
            );
        }
    }
    // Every branch runner left can be read in full, whatever its task's outcome.
    let branches = repo.git(&[
        "for-each-ref",
        "--format=%(refname:short)",
        "refs/heads/runner",
    ]);
    assert_eq!(branches.lines().count(), succeeded, "{branches}");
    for b in branches.lines() {
        assert_eq!(missing_objects(&repo, b), Ok(vec![]), "branch {b}");
    }
    assert_eq!(
        repo.git(&["for-each-ref", "refs/runner"]),
        "",
        "{}",
        run.stderr
    );
    assert!(
        succeeded > 0,
        "no task succeeded:\n{}\n{}",
        run.stdout,
        run.stderr
    );
}
