//! End-to-end: the batch's worktree pool (overlay worktrees where runner can mount them, else
//! a pool of checked-out worktrees reset between tasks): each task sees exactly its base, its
//! writes reach no other task, its patch is exact, nothing is left behind — after the batch,
//! after a signal (except what resume needs) or after the runner is killed (the next batch
//! removes it) — and a task interrupted in the pool can be resumed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::support::*;

/// The log line of each way the pool makes worktrees.
const OVERLAY_LOG: &str = "isolated tasks run in overlay worktrees";
const CHECKOUT_LOG: &str = "checked-out worktrees, reset between tasks";
const UNAVAILABLE_LOG: &str = "overlay worktrees are not available here";

/// Mount points under `dir`, from /proc/self/mountinfo.
fn mounts_under(dir: &Path) -> Vec<String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| m.replace("\\040", " "))
        .filter(|m| Path::new(m).starts_with(&dir))
        .collect()
}

/// `git worktree list --porcelain` paths.
fn worktrees(repo: &TestRepo) -> Vec<String> {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(String::from)
        .collect()
}

fn by_task(run: &Run) -> std::collections::HashMap<String, Value> {
    run.json()
        .into_iter()
        .map(|r| (r["runner_task"].as_str().unwrap().to_string(), r))
        .collect()
}

/// The worktree a task ran in, from its transcript's `runner_worktree` record.
fn worktree_of(result: &Value) -> PathBuf {
    let t = transcript_of(result);
    let rec = t
        .iter()
        .find(|r| r["subtype"] == "runner_worktree")
        .unwrap_or_else(|| panic!("no runner_worktree record in {t:?}"));
    PathBuf::from(rec["worktree"].as_str().unwrap())
}

/// A repository with what the edit script changes: a shared file, a file to delete, a script
/// to make executable, a directory to rename, and a `.gitignore`.
fn repo_to_edit() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("shared.txt", "original\n");
    repo.write("gone.txt", "delete me\n");
    repo.write("tool.sh", "echo tool\n");
    repo.write("olddir/a.txt", "a\n");
    repo.write("olddir/sub/b.txt", "b\n");
    repo.write(".gitignore", "target/\n");
    repo.write("edit.sh", EDIT_AND_WAIT);
    repo.commit_all("files to edit");
    repo
}

/// `sh edit.sh BARRIER_DIR N`: show the shared file, make every kind of change (append a line
/// naming this task, delete, create, chmod, rename a directory, write an ignored file), wait
/// until `N` tasks got there (a barrier in BARRIER_DIR, so the tasks' edits overlap in time),
/// and show what this task sees then.
const EDIT_AND_WAIT: &str = r#"me="task-$(pwd | cksum | cut -d' ' -f1)"
echo "ME=$me"
echo "STATUS=[$(git status --porcelain | tr '\n' ' ')]"
echo "HEAD=$(git rev-parse HEAD)"
for f in shared.txt gone.txt new/dir/f.txt renamed/a.txt target/out.o; do
  if [ -e "$f" ]; then echo "BEFORE $f: $(cat "$f")"; else echo "BEFORE $f: missing"; fi
done
echo "$me" >> shared.txt
rm gone.txt
mkdir -p new/dir && echo fresh > new/dir/f.txt
chmod +x tool.sh
mv olddir renamed
mkdir -p target && echo junk > target/out.o
mkdir -p "$1"; touch "$1/$(pwd | cksum | cut -d' ' -f1)"
i=0
while [ "$(ls "$1" | wc -l)" -lt "$2" ]; do
  i=$((i+1)); if [ $i -gt 1200 ]; then echo BARRIER-TIMEOUT; break; fi; sleep 0.05
done
echo "AFTER shared.txt: $(cat shared.txt | tr '\n' ' ')"
"#;

/// Specs for `names` in `repo/tasks`, each working at the repository's root. Their commands
/// run in the sandbox (where the kernel can confine them), which lets them write in their
/// worktree and in `out/barrier` (made here) only.
fn edit_specs(repo: &TestRepo, names: &[&str], out: &OutDir) -> PathBuf {
    let dir = repo.path().join("tasks");
    std::fs::create_dir_all(&dir).unwrap();
    let barrier = out.path().join("barrier");
    std::fs::create_dir_all(&barrier).unwrap();
    let extra = format!(
        "workdir: ..\npermissions:\n  mode: bypassPermissions\n{}",
        sandbox_write(&barrier)
    );
    for n in names {
        write_spec_named(&dir, &format!("{n}.yaml"), &named_task(n, &extra));
    }
    repo.commit_all("task specs");
    dir
}

/// What a task's edit script saw: its id and the lines it printed. Its worktree was a clean
/// checkout of the base commit, to git too (its own HEAD and index).
fn edit_output(repo: &TestRepo, req: &CapturedRequest) -> (String, String) {
    let seen = req.tool_result_text("toolu_1").unwrap();
    assert!(seen.contains("STATUS=[]\n"), "{seen}");
    let head = repo.git(&["rev-parse", "HEAD"]);
    assert!(seen.contains(&format!("HEAD={head}")), "{seen}");
    let me = seen
        .lines()
        .find_map(|l| l.strip_prefix("ME="))
        .unwrap_or_else(|| panic!("no ME= line: {seen}"))
        .to_string();
    (me, seen)
}

/// Apply a task's patch to a fresh clone of the base and check the result is exactly what
/// the edit script made in its worktree.
fn check_patch(repo: &TestRepo, result: &Value, me: &str) {
    let patch = PathBuf::from(result["runner_git"]["patch"].as_str().unwrap());
    let clone = tempfile::tempdir().unwrap();
    git(
        clone.path(),
        &["clone", "-q", repo.path().to_str().unwrap(), "c"],
    );
    let c = clone.path().join("c");
    git(&c, &["apply", patch.to_str().unwrap()]);
    let read = |rel: &str| std::fs::read_to_string(c.join(rel)).ok();
    assert_eq!(
        read("shared.txt").as_deref(),
        Some(format!("original\n{me}\n").as_str())
    );
    assert_eq!(read("gone.txt"), None, "deleted");
    assert_eq!(read("new/dir/f.txt").as_deref(), Some("fresh\n"));
    assert_eq!(read("renamed/a.txt").as_deref(), Some("a\n"));
    assert_eq!(read("renamed/sub/b.txt").as_deref(), Some("b\n"));
    assert!(!c.join("olddir").exists(), "renamed away");
    assert!(
        !c.join("target").exists(),
        "ignored files are not in a patch"
    );
    let mode = std::fs::metadata(c.join("tool.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "tool.sh is executable after the patch");
    let g = &result["runner_git"];
    // shared.txt, gone.txt, new/dir/f.txt, tool.sh, olddir/a.txt, olddir/sub/b.txt and the
    // two renamed files.
    assert_eq!(g["files_changed"], 8, "{g}");
}

/// Two tasks at once edit the same files in their own worktrees: each sees the base and only
/// its own edits, each patch is exact, and nothing is left behind. `env`: how the pool is
/// chosen. Returns runner's stderr.
fn two_tasks_edit_the_same_files(env: &[(&str, &str)]) -> String {
    let repo = repo_to_edit();
    let out = OutDir::new();
    let specs = edit_specs(&repo, &["alpha", "beta"], &out);
    let barrier = out.path().join("barrier");
    let cmd = format!("sh edit.sh {} 2", barrier.display());
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": cmd})),
        tool_turn("toolu_1", "Bash", json!({"command": cmd})),
        text_turn("done"),
        text_turn("done"),
    ]);
    let run = exec(&mock, &repo, &out)
        .envs(env.iter().copied())
        .args(["--jobs", "2"])
        .json()
        .arg(&specs)
        .run();
    run.expect_code(0);
    let results = by_task(&run);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    for req in &reqs[2..] {
        let (me, seen) = edit_output(&repo, req);
        assert!(
            !seen.contains("BARRIER-TIMEOUT"),
            "tasks did not overlap: {seen}"
        );
        // The base, whatever the other task did meanwhile...
        for line in [
            "BEFORE shared.txt: original\n",
            "BEFORE gone.txt: delete me\n",
            "BEFORE new/dir/f.txt: missing\n",
            "BEFORE renamed/a.txt: missing\n",
            "BEFORE target/out.o: missing\n",
        ] {
            assert!(seen.contains(line), "{line:?} not in {seen}");
        }
        // ...and only its own edit afterwards.
        assert!(
            seen.trim_end()
                .ends_with(&format!("AFTER shared.txt: original {me}")),
            "{seen}"
        );
        let task = task_of(req);
        check_patch(&repo, &results[&task], &me);
        let wt = worktree_of(&results[&task]);
        assert!(
            wt.starts_with(out.transcripts().join(".worktrees")),
            "{}",
            wt.display()
        );
        assert_eq!(results[&task]["runner_git"]["isolated"], true);
        // The edits above were made under the sandbox where the kernel confines commands: the
        // pooled worktree is the task's writable root.
        let sandbox = &results[&task]["runner_sandbox"];
        assert_eq!(
            sandbox["confined"],
            json!(runner::sandbox::support().can_confine()),
            "{sandbox}"
        );
        let writable: Vec<PathBuf> = serde_json::from_value(sandbox["writable"].clone()).unwrap();
        assert!(writable.contains(&wt), "{sandbox}");
    }
    // The repository is untouched; no worktree, branch, mount or pool directory is left.
    assert_eq!(repo.read("shared.txt"), "original\n");
    assert_eq!(repo.status(), "");
    assert_eq!(worktrees(&repo).len(), 1, "{:?}", worktrees(&repo));
    assert_eq!(repo.git(&["branch", "--list"]).trim(), "* main");
    assert_eq!(mounts_under(out.path()), Vec::<String>::new());
    assert!(!out.transcripts().join(".worktrees").exists());
    mock.assert_clean();
    run.stderr
}

#[test]
fn pooled_worktrees_isolate_tasks_and_patches_are_exact() {
    let stderr = two_tasks_edit_the_same_files(&[]);
    // The log says which way the worktrees were made: overlays where runner may mount
    // (root, CAP_SYS_ADMIN), else checkouts.
    assert!(
        stderr.contains(OVERLAY_LOG) ^ stderr.contains(UNAVAILABLE_LOG),
        "{stderr}"
    );
}

#[test]
fn forced_checkout_pool_isolates_tasks_and_patches_are_exact() {
    let stderr = two_tasks_edit_the_same_files(&[("RUNNER_WORKTREES", "checkout")]);
    assert!(stderr.contains(CHECKOUT_LOG), "{stderr}");
    assert!(!stderr.contains(OVERLAY_LOG), "{stderr}");
}

/// Where overlays cannot be used (here: a transcript directory whose path overlayfs cannot
/// take), the batch says so and falls back to checked-out worktrees, reused between tasks
/// without one task's files reaching the next.
#[test]
fn fallback_is_logged_and_a_reused_worktree_starts_clean() {
    let repo = repo_to_edit();
    let out = OutDir::new();
    let specs = edit_specs(&repo, &["t1", "t2", "t3"], &out);
    let transcripts = out.path().join("trans,cripts");
    let barrier = out.path().join("barrier");
    let cmd = format!("sh edit.sh {} 1", barrier.display());
    let mut script = Vec::new();
    for _ in 0..3 {
        script.push(tool_turn("toolu_1", "Bash", json!({"command": cmd})));
        script.push(text_turn("done"));
    }
    let mock = MockAnthropic::start(script);
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .arg("exec")
        .arg("--transcript-dir")
        .arg(&transcripts)
        .args(["--jobs", "1"])
        .json()
        .arg(&specs)
        .run();
    run.expect_code(0);
    assert!(run.stderr.contains(UNAVAILABLE_LOG), "{}", run.stderr);
    assert!(run.stderr.contains(CHECKOUT_LOG), "{}", run.stderr);
    let results = by_task(&run);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 6);
    let mut paths = Vec::new();
    for req in reqs.iter().skip(1).step_by(2) {
        let (me, seen) = edit_output(&repo, req);
        // Every task starts from the base: nothing of the task before it (changed, deleted,
        // new, renamed or ignored files) is left in the worktree it gets next.
        for line in [
            "BEFORE shared.txt: original\n",
            "BEFORE gone.txt: delete me\n",
            "BEFORE new/dir/f.txt: missing\n",
            "BEFORE renamed/a.txt: missing\n",
            "BEFORE target/out.o: missing\n",
        ] {
            assert!(seen.contains(line), "{line:?} not in {seen}");
        }
        let r = &results[&task_of(req)];
        check_patch(&repo, r, &me);
        paths.push(worktree_of(r));
    }
    // --jobs 1: one worktree, reused.
    assert!(paths.iter().all(|p| p == &paths[0]), "{paths:?}");
    assert_eq!(repo.status(), "");
    assert_eq!(worktrees(&repo).len(), 1);
    assert!(!transcripts.join(".worktrees").exists());
    mock.assert_clean();
}

fn stalled() -> MockTurn {
    MockTurn::Stall {
        events: Resp::new().text("slow answer").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }
}

/// A batch killed with SIGKILL mid-run (worktrees mounted, tasks waiting on the model) leaves
/// nothing a second run in the same transcript directory trips over: the second run cleans
/// up after it (unmounts, removes everything, the worktrees its tasks were running in too,
/// with a log line: no result names them) and works as usual.
#[test]
fn a_killed_batch_leaves_nothing_a_second_run_trips_over() {
    let repo = repo_to_edit();
    let out = OutDir::new();
    let specs = edit_specs(&repo, &["k1", "k2", "k3"], &out);
    let mock = MockAnthropic::start(vec![stalled(), stalled(), stalled()]);
    let started = exec(&mock, &repo, &out)
        .args(["--jobs", "3"])
        .json()
        .arg(&specs)
        .spawn();
    assert!(
        mock.wait_for_requests(3, Duration::from_secs(60)),
        "the requests never arrived"
    );
    started.signal(Signal::SIGKILL);
    let killed = started.wait();
    assert_eq!(killed.code, None, "killed by a signal");
    let pool = out.transcripts().join(".worktrees");
    assert!(pool.is_dir(), "the killed batch's pool is there");

    // A second batch in the same place.
    let mock2 = MockAnthropic::start(vec![text_turn("done"), text_turn("done")]);
    let dir2 = repo.path().join("tasks2");
    std::fs::create_dir_all(&dir2).unwrap();
    for n in ["s1", "s2"] {
        write_spec_named(&dir2, &format!("{n}.yaml"), &named_task(n, "workdir: ..\n"));
    }
    repo.commit_all("more specs");
    let run = exec(&mock2, &repo, &out)
        .args(["--jobs", "2"])
        .json()
        .arg(&dir2)
        .run();
    run.expect_code(0);
    for r in by_task(&run).values() {
        assert_eq!(r["runner_git"]["isolated"], true);
        assert_eq!(r["runner_git"]["changed"], false);
    }
    // Nothing is mounted any more, the repository knows no worktree, and nothing of the killed
    // batch is left: the worktrees its three tasks were running in went too, said so.
    assert_eq!(mounts_under(out.path()), Vec::<String>::new());
    assert_eq!(worktrees(&repo).len(), 1);
    assert_eq!(repo.status(), "");
    let swept = run
        .stderr
        .lines()
        .find(|l| l.contains("removed the worktrees of tasks that were still running"))
        .unwrap_or_else(|| panic!("no log line for the swept worktrees: {}", run.stderr));
    assert!(swept.contains("worktrees=3"), "{swept}");
    assert!(
        !pool.exists(),
        "{:?}",
        std::fs::read_dir(&pool).map(|d| d.count())
    );
    mock2.assert_clean();
}

/// A task of the pool interrupted by SIGINT keeps its worktree (an overlay is unmounted);
/// `runner resume` continues it there, with the edits it made before, and unmounts it again.
#[test]
fn an_interrupted_pooled_task_resumes_in_its_worktree() {
    let repo = repo_to_edit();
    let out = OutDir::new();
    let specs = edit_specs(&repo, &["first", "second"], &out);
    // --jobs 1: `first` edits shared.txt, then stalls; the signal comes during the stall.
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "toolu_1",
            "Bash",
            json!({"command": "echo edited-before-interrupt >> shared.txt"}),
        ),
        stalled(),
        stalled(),
    ]);
    let started = exec(&mock, &repo, &out)
        .args(["--jobs", "1"])
        .json()
        .arg(&specs)
        .spawn();
    assert!(mock.wait_for_requests(2, Duration::from_secs(60)));
    std::thread::sleep(Duration::from_millis(200));
    started.signal(Signal::SIGINT);
    let run = started.wait();
    run.expect_code(130);
    let results = by_task(&run);
    let r = &results["first"];
    assert_eq!(r["runner_outcome"], "interrupted");
    let kept = PathBuf::from(r["runner_git"]["worktree"].as_str().expect("worktree kept"));
    assert_eq!(kept, worktree_of(r));
    // Its patch so far was written; nothing is mounted after the run.
    let patch = std::fs::read_to_string(r["runner_git"]["patch"].as_str().unwrap()).unwrap();
    assert!(patch.contains("+edited-before-interrupt"), "{patch}");
    assert_eq!(mounts_under(out.path()), Vec::<String>::new());

    let mock2 = MockAnthropic::start(vec![
        tool_turn("toolu_2", "Bash", json!({"command": "cat shared.txt; pwd"})),
        text_turn("finished"),
    ]);
    let transcript = r["runner_transcript_path"].as_str().unwrap();
    let resumed = Runner::against(&mock2)
        .current_dir(repo.path())
        .args(["resume", transcript, "--output-format", "json"])
        .run();
    resumed.expect_code(0);
    let seen = mock2.request(1).tool_result_text("toolu_2").unwrap();
    assert!(
        seen.contains("original\nedited-before-interrupt\n"),
        "{seen}"
    );
    assert!(seen.contains(kept.to_str().unwrap()), "{seen}");
    assert_eq!(mounts_under(out.path()), Vec::<String>::new());
    assert_eq!(repo.read("shared.txt"), "original\n");
    mock2.assert_clean();
}
