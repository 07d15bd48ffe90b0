//! End-to-end: `runner resume` of an isolated task whose runner was killed with SIGKILL mid-way
//! (a batch's pooled worktree, overlay or checkout, and a task run alone in a worktree of its
//! own): started from another directory, after HEAD moved on, the resumed task's patch,
//! branch commit and `result.json` hold its whole change since the base the run started from
//! — the edits before the kill and after — in the run's own output directories; and
//! `--skip-passed` then skips it on that whole change.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::support::*;

/// A turn that sends a little text, then goes silent for a minute (the runner is killed
/// during it).
fn stalled() -> MockTurn {
    MockTurn::Stall {
        events: Resp::new().text("thinking").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }
}

/// The transcript of the run of task `name` under `dir`.
fn transcript_of_task(dir: &Path, name: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}-"))
        })
        .map(|e| e.path().join("transcript.jsonl"))
        .unwrap_or_else(|| panic!("no run of {name} in {}", dir.display()))
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Task `first` (of the tasks `names`, run with `env`) edits `shared.txt` and writes
/// `before.txt`, then the runner is killed with SIGKILL while it waits on the model. HEAD moves
/// on; `runner resume` from an unrelated directory edits `shared.txt` again, writes `after.txt`
/// and finishes. Checks the patch, the branch, `result.json` and what is left behind, then
/// that `--skip-passed` skips `first`.
fn killed_then_resumed(names: &[&str], env: &[(&str, &str)]) {
    let repo = TestRepo::new();
    repo.write("shared.txt", "original\n");
    let tasks = repo.path().join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    // A batch isolates its tasks by default; a task run alone says so.
    let isolate = if names.len() == 1 {
        "  isolate: true\n"
    } else {
        ""
    };
    let extra = format!(
        "workdir: ..\npermissions:\n  mode: bypassPermissions\ngit:\n{isolate}  branch: true\n"
    );
    for n in names {
        write_spec_named(&tasks, &format!("{n}.yaml"), &named_task(n, &extra));
    }
    repo.commit_all("tasks");
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = OutDir::new();

    let mock = MockAnthropic::start(vec![
        tool_turn(
            "toolu_1",
            "Bash",
            json!({"command": "echo before-kill >> shared.txt && echo one > before.txt"}),
        ),
        stalled(),
    ]);
    let started = exec(&mock, &repo, &out)
        .envs(env.iter().copied())
        .args(["--jobs", "1"])
        .json()
        .arg(&tasks)
        .spawn();
    // The edit is on disk once its result has gone back to the model.
    assert!(
        mock.wait_for_requests(2, Duration::from_secs(60)),
        "the second request never arrived"
    );
    started.signal(Signal::SIGKILL);
    assert_eq!(started.wait().code, None, "killed by the signal");
    let transcript = transcript_of_task(&out.transcripts(), "first");
    let run_dir = transcript.parent().unwrap().to_path_buf();
    assert!(!run_dir.join("result.json").exists());
    let worktree = read_json_lines(&transcript)
        .into_iter()
        .find(|r| r["subtype"] == "runner_worktree")
        .map(|r| PathBuf::from(r["worktree"].as_str().unwrap()))
        .expect("the task ran in a worktree");

    // HEAD moves on before the resume: the task's base does not.
    repo.write("later.txt", "later\n");
    repo.commit_all("a later commit");

    let elsewhere = tempfile::tempdir().unwrap();
    let mock2 = MockAnthropic::start(vec![
        tool_turn(
            "toolu_2",
            "Bash",
            json!({"command": "echo after-resume >> shared.txt && echo two > after.txt"}),
        ),
        text_turn("finished"),
    ]);
    let resumed = Runner::against(&mock2)
        .current_dir(elsewhere.path())
        .args([
            "resume",
            transcript.to_str().unwrap(),
            "--output-format",
            "json",
        ])
        .run();
    resumed.expect_code(0);
    let seen = mock2.request(1).tool_result_text("toolu_2").unwrap();
    assert!(!seen.contains("rror"), "{seen}");
    let r = resumed.result();
    assert_eq!(r["runner_outcome"], "success", "{}", resumed.stderr);

    // The patch: the whole change, in the run's patch directory.
    let patches = std::fs::canonicalize(out.transcripts())
        .unwrap()
        .join("patches");
    let patch_path = patches.join("first.patch");
    assert_eq!(r["runner_git"]["patch"], patch_path.to_str().unwrap());
    let patch = std::fs::read_to_string(&patch_path).unwrap();
    for line in ["+before-kill", "+after-resume", "+one", "+two"] {
        assert!(patch.contains(line), "{line} missing from\n{patch}");
    }
    assert!(!patch.contains("later"), "{patch}");
    assert!(
        !elsewhere.path().join(".runner").exists(),
        "nothing is written where the resume was started"
    );
    let clone = tempfile::tempdir().unwrap();
    git(
        clone.path(),
        &["clone", "-q", repo.path().to_str().unwrap(), "c"],
    );
    let c = clone.path().join("c");
    git(&c, &["checkout", "-q", &base]);
    git(&c, &["apply", patch_path.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(c.join("shared.txt")).unwrap(),
        "original\nbefore-kill\nafter-resume\n"
    );

    assert_branch_and_result(&repo, &run_dir, &r, &base);

    // Nothing of the task is left: its worktree and runner's temporary references.
    assert!(!worktree.exists(), "{} is left", worktree.display());
    assert_eq!(repo.git(&["for-each-ref", "refs/runner"]), "");
    assert_eq!(
        repo.git(&["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );

    // A later run from the base skips the task: it passed, with its whole change.
    repo.git(&["reset", "-q", "--hard", &base]);
    let rest: Vec<MockTurn> = names[1..].iter().map(|_| text_turn("done")).collect();
    let mock3 = MockAnthropic::start(rest);
    let again = exec(&mock3, &repo, &out)
        .envs(env.iter().copied())
        .args(["--jobs", "1", "--skip-passed"])
        .arg(out.transcripts())
        .json()
        .arg(&tasks)
        .run();
    again.expect_code(0);
    let first = again
        .json()
        .into_iter()
        .find(|r| r["runner_task"] == "first")
        .unwrap();
    assert_eq!(first["runner_outcome"], "skipped", "{first}");
    mock2.assert_clean();
    mock3.assert_clean();
}

/// The resumed task's branch (one commit on `base` with the whole change) and its
/// `result.json` (in `run_dir`, resumed, with the whole change); `r` is the resume's result.
fn assert_branch_and_result(repo: &TestRepo, run_dir: &Path, r: &Value, base: &str) {
    // The branch: one commit on the base with the whole change.
    assert_eq!(repo.git(&["rev-parse", "runner/first^"]).trim(), base);
    assert_eq!(
        repo.git(&["diff", "--name-only", base, "runner/first"]),
        "after.txt\nbefore.txt\nshared.txt\n"
    );
    assert_eq!(
        repo.git(&["show", "runner/first:shared.txt"]),
        "original\nbefore-kill\nafter-resume\n"
    );

    // result.json: in the run's directory, resumed, with the whole change.
    let result = read_json(&run_dir.join("result.json"));
    assert_eq!(result["outcome"], "success");
    assert_eq!(result["resumed"], true);
    assert_eq!(result["original_session_id"], r["session_id"]);
    assert_eq!(result["base_commit"], base);
    let mut files: Vec<&str> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["after.txt", "before.txt", "shared.txt"]);
}

#[test]
fn a_killed_batch_task_resumes_with_its_whole_change() {
    killed_then_resumed(&["first", "second"], &[]);
}

#[test]
fn a_killed_batch_task_in_a_checked_out_worktree_resumes_with_its_whole_change() {
    killed_then_resumed(&["first", "second"], &[("RUNNER_WORKTREES", "checkout")]);
}

#[test]
fn a_killed_task_run_alone_resumes_with_its_whole_change() {
    killed_then_resumed(&["first"], &[]);
}
