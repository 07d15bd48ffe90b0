//! End-to-end: git worktree isolation, patches, branch commits, dirty trees and
//! `git.require_changes`, in real temporary repositories through the real binary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::support::*;
use serde_json::{Value, json};

fn by_task(run: &Run) -> std::collections::HashMap<String, Value> {
    run.json()
        .into_iter()
        .map(|r| (r["runner_task"].as_str().unwrap().to_string(), r))
        .collect()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn patch_of(r: &Value) -> String {
    read(Path::new(
        r["runner_git"]["patch"].as_str().expect("a patch path"),
    ))
}

/// `git worktree list --porcelain` paths.
fn worktrees(repo: &TestRepo) -> Vec<String> {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(String::from)
        .collect()
}

/// A script for the Bash tool (`sh edit.sh BARRIER_DIR N`): print the shared file, add one
/// line to it, wait until `N` tasks have reached the same point (a barrier in BARRIER_DIR),
/// print it again.
const EDIT_AND_WAIT: &str = r#"echo BEFORE; cat shared.txt; echo x >> shared.txt
mkdir -p "$1"; touch "$1/$(pwd | cksum | cut -d' ' -f1)"
i=0
while [ "$(ls "$1" | wc -l)" -lt "$2" ]; do
  i=$((i+1)); if [ $i -gt 1200 ]; then echo BARRIER-TIMEOUT; break; fi; sleep 0.05
done
echo AFTER; cat shared.txt
"#;

#[test]
fn parallel_tasks_edit_the_same_file_in_separate_worktrees() {
    let repo = TestRepo::new();
    repo.write("shared.txt", "original\n");
    repo.write("edit.sh", EDIT_AND_WAIT);
    repo.commit_all("add shared.txt");
    let specs_dir = repo.path().join("tasks");
    std::fs::create_dir(&specs_dir).unwrap();
    let out = OutDir::new();
    // The two tasks meet at a barrier file outside their worktrees.
    let extra = format!(
        "permissions:\n  mode: bypassPermissions\n{}",
        sandbox_write(out.path())
    );
    write_spec_named(
        &specs_dir,
        "a.yaml",
        &named_task("alpha", &format!("workdir: ..\n{extra}")),
    );
    write_spec_named(
        &specs_dir,
        "b.yaml",
        &named_task("beta", &format!("workdir: ..\n{extra}")),
    );
    let barrier = out.path().join("barrier");
    let cmd = format!("sh edit.sh {} 2", barrier.display());
    // Both tasks' first requests get the Bash call; neither can finish it before the other
    // has made its edit, so the two edits overlap in time.
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": cmd})),
        tool_turn("toolu_1", "Bash", json!({"command": cmd})),
        text_turn("done"),
        text_turn("done"),
    ]);
    let run = exec(&mock, &repo, &out)
        .args(["--jobs", "2"])
        .json()
        .arg(&specs_dir)
        .run();
    run.expect_code(0);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    for req in &reqs[2..] {
        let seen = req.tool_result_text("toolu_1").unwrap();
        assert!(
            !seen.contains("BARRIER-TIMEOUT"),
            "tasks did not overlap: {seen}"
        );
        // Each task saw the original file, and only its own edit afterwards.
        assert!(
            seen.contains("BEFORE\noriginal\n") && seen.trim_end().ends_with("AFTER\noriginal\nx"),
            "{}: {seen}",
            task_of(req)
        );
        assert!(!seen.contains("x\nx"), "saw the other task's edit: {seen}");
    }
    // The repository's own working tree is untouched, and the worktrees are gone.
    assert_eq!(repo.read("shared.txt"), "original\n");
    assert_eq!(worktrees(&repo).len(), 1, "{:?}", worktrees(&repo));
    assert_eq!(
        repo.git(&["branch", "--list"]).trim(),
        "* main",
        "no branches left behind"
    );
    let results = by_task(&run);
    for name in ["alpha", "beta"] {
        let r = &results[name];
        let g = &r["runner_git"];
        assert_eq!(g["isolated"], true, "{r}");
        assert_eq!(g["changed"], true);
        assert_eq!(g["files_changed"], 1);
        assert_eq!(g["base_commit"], repo.git(&["rev-parse", "HEAD"]).trim());
        let patch = patch_of(r);
        assert!(
            patch.contains("--- a/shared.txt\n+++ b/shared.txt\n")
                && patch.contains(" original\n+x\n"),
            "{patch}"
        );
        assert!(
            Path::new(g["patch"].as_str().unwrap()).starts_with(out.transcripts().join("patches")),
            "{g}"
        );
        assert_eq!(
            Path::new(g["patch"].as_str().unwrap()).file_name().unwrap(),
            format!("{name}.patch").as_str()
        );
        // The transcript names the worktree; its path was under the output directory and
        // the agent worked there.
        let t = transcript_of(r);
        let wt = t
            .iter()
            .find(|rec| rec["subtype"] == "runner_worktree")
            .unwrap_or_else(|| panic!("no runner_worktree record in {t:?}"));
        let wt_path = PathBuf::from(wt["worktree"].as_str().unwrap());
        assert!(wt_path.starts_with(out.transcripts()), "{wt}");
        assert!(!wt_path.exists(), "worktree removed after the task");
        assert_eq!(
            t[0]["cwd"], wt["worktree"],
            "the agent's cwd is the worktree"
        );
    }
    // Every patch applies to the base commit.
    let clone = tempfile::tempdir().unwrap();
    git(
        clone.path(),
        &["clone", "-q", repo.path().to_str().unwrap(), "c"],
    );
    let c = clone.path().join("c");
    git(
        &c,
        &[
            "apply",
            results["alpha"]["runner_git"]["patch"].as_str().unwrap(),
        ],
    );
    assert_eq!(read(&c.join("shared.txt")), "original\nx\n");
    mock.assert_clean();
}

#[test]
fn single_task_in_place_commits_on_a_branch_with_the_author() {
    let repo = TestRepo::new();
    repo.write("src/lib.txt", "one\ntwo\n");
    repo.commit_all("add lib");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let spec = write_spec(
        repo.path(),
        &named_task(
            "fix-lib",
            "permissions:\n  mode: acceptEdits\ngit:\n  branch: true\n  author:\n    name: Nightly Bot\n    email: bot@example.com\n",
        ),
    );
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_0", "Read", json!({"file_path": repo.path().join("src/lib.txt")})),
        Resp::new()
            .tool_use(
                "toolu_1",
                "Edit",
                json!({"file_path": repo.path().join("src/lib.txt"), "old_string": "two", "new_string": "TWO"}),
            )
            .tool_use(
                "toolu_2",
                "Write",
                json!({"file_path": repo.path().join("src/new.txt"), "content": "fresh\n"}),
            )
            .turn(),
        text_turn("edited"),
    ]);
    let out = OutDir::new();
    let junit = out.junit();
    let run = exec(&mock, &repo, &out)
        .json()
        .junit(&junit)
        .arg(&spec)
        .run();
    run.expect_code(0);
    let r = run.result();
    let g = &r["runner_git"];
    assert_eq!(g["isolated"], false, "a single task runs in place: {r}");
    assert_eq!(g["changed"], true, "{r}");
    assert_eq!(
        g["files_changed"],
        2,
        "{:?}",
        mock.request(2).tool_results()
    );
    assert_eq!(g["branch"], "runner/fix-lib");
    // In place: the working tree has the edits; HEAD, the branch and the index did not move.
    assert_eq!(repo.read("src/lib.txt"), "one\nTWO\n");
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), head);
    assert_eq!(
        repo.git(&["symbolic-ref", "--short", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "");
    assert!(
        !transcript_of(&r)
            .iter()
            .any(|rec| rec["subtype"] == "runner_worktree"),
        "no worktree for an in-place task"
    );
    // The branch commit: one commit on top of HEAD, by the configured author, with exactly
    // the task's changes (not the untracked spec file that was there before).
    let commit = g["commit"].as_str().unwrap();
    assert_eq!(repo.git(&["rev-parse", "runner/fix-lib"]).trim(), commit);
    assert_eq!(repo.git(&["rev-parse", "runner/fix-lib~1"]).trim(), head);
    assert_eq!(
        repo.git(&[
            "log",
            "-1",
            "--format=%an <%ae>|%cn <%ce>|%s",
            "runner/fix-lib"
        ])
        .trim(),
        "Nightly Bot <bot@example.com>|Nightly Bot <bot@example.com>|runner: fix-lib"
    );
    assert_eq!(
        repo.git(&["diff", "--name-status", &head, "runner/fix-lib"]),
        "M\tsrc/lib.txt\nA\tsrc/new.txt\n"
    );
    assert_eq!(repo.git(&["show", "runner/fix-lib:src/new.txt"]), "fresh\n");
    // The patch holds the same changes, new file included.
    let patch = patch_of(&r);
    assert!(patch.contains("-two\n+TWO\n"), "{patch}");
    assert!(
        patch.contains("new file mode 100644")
            && patch.contains("+++ b/src/new.txt\n@@ -0,0 +1 @@\n+fresh\n"),
        "{patch}"
    );
    assert!(!patch.contains("task.yaml"), "{patch}");
    let xml = read(&junit);
    for p in [
        r#"<property name="git.changed" value="true"/>"#,
        r#"<property name="git.branch" value="runner/fix-lib"/>"#,
        &format!(r#"<property name="git.commit" value="{commit}"/>"#),
    ] {
        assert!(xml.contains(p), "{p} missing in {xml}");
    }
    mock.assert_clean();
}

#[test]
fn dirty_tree_is_an_error_for_isolated_tasks_and_nothing_runs() {
    let repo = TestRepo::new();
    repo.write("README.md", "# uncommitted edit\n");
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", ""));
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).arg(&a).arg(&b).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("uncommitted changes (README.md)")
            && run.stderr.contains("git.base: working-tree"),
        "{}",
        run.stderr
    );
    // Said once, not once per spec.
    assert_eq!(
        run.stderr
            .matches("uncommitted changes (README.md)")
            .count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(mock.requests().len(), 0);
    // One task edits in place: no error.
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    exec(&mock, &repo, &out).arg(&a).run().expect_code(0);
    mock.assert_clean();
}

#[test]
fn edited_batch_specs_are_a_warning_and_base_working_tree_is_a_flag() {
    let repo = TestRepo::new();
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", ""));
    repo.commit_all("specs");
    // The specs just edited: a warning; the batch runs from HEAD.
    std::fs::write(&a, named_task("alpha", "limits:\n  max_turns: 5\n")).unwrap();
    let mock = MockAnthropic::start(vec![text_turn("ok"), text_turn("ok")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).arg(&a).arg(&b).run();
    run.expect_code(0);
    assert!(
        run.stderr
            .contains("spec files of this run have uncommitted changes (a.yaml)"),
        "{}",
        run.stderr
    );
    mock.assert_clean();
    // Another file edited: `--base working-tree` on the command line takes it along.
    repo.write("README.md", "# uncommitted edit\n");
    let mock = MockAnthropic::start(vec![text_turn("ok"), text_turn("ok")]);
    let run = exec(&mock, &repo, &out).arg(&a).arg(&b).run();
    run.expect_code(2);
    let run = exec(&mock, &repo, &out)
        .args(["--base", "working-tree", "--json"])
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    for (_, r) in by_task(&run) {
        assert_ne!(r["runner_git"]["base_commit"].as_str().unwrap(), head);
    }
    mock.assert_clean();
}

#[test]
fn base_working_tree_starts_from_uncommitted_state_and_patches_only_the_task() {
    let repo = TestRepo::new();
    repo.write("README.md", "# work in progress\n");
    repo.write("notes.txt", "untracked notes\n");
    let extra =
        "permissions:\n  mode: bypassPermissions\ngit:\n  base: working-tree\n  branch: true\n";
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", extra));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", extra));
    let cmd = "cat README.md notes.txt; echo added >> notes.txt";
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": cmd})),
        text_turn("done"),
        tool_turn("toolu_1", "Bash", json!({"command": cmd})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).json().arg(&a).arg(&b).run();
    run.expect_code(0);
    for i in [1, 3] {
        assert_eq!(
            mock.request(i).tool_result_text("toolu_1").unwrap().trim(),
            "# work in progress\nuntracked notes",
            "the worktree has the uncommitted and untracked files"
        );
    }
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    for (name, r) in by_task(&run) {
        let g = &r["runner_git"];
        assert_eq!(g["isolated"], true);
        // The base is a snapshot commit of the working tree on top of HEAD.
        let base = g["base_commit"].as_str().unwrap();
        assert_ne!(base, head);
        assert_eq!(repo.git(&["rev-parse", &format!("{base}~1")]).trim(), head);
        let patch = patch_of(&r);
        assert!(patch.contains(" untracked notes\n+added\n"), "{patch}");
        assert!(
            !patch.contains("README.md"),
            "{name}: the user's edit is not the task's: {patch}"
        );
        let branch = format!("runner/{name}");
        assert_eq!(
            repo.git(&["rev-parse", &format!("{branch}~1")]).trim(),
            base
        );
        assert_eq!(
            repo.git(&["show", &format!("{branch}:notes.txt")]),
            "untracked notes\nadded\n"
        );
    }
    // The user's working tree is as it was.
    assert_eq!(repo.read("notes.txt"), "untracked notes\n");
    assert_eq!(repo.read("README.md"), "# work in progress\n");
    mock.assert_clean();
}

#[test]
fn require_changes_fails_a_task_that_changed_nothing() {
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        &named_task("noop", "git:\n  require_changes: true\n  branch: true\n"),
    );
    let mock = MockAnthropic::start(vec![text_turn("nothing to do")]);
    let out = OutDir::new();
    let junit = out.junit();
    let run = exec(&mock, &repo, &out)
        .json()
        .junit(&junit)
        .arg(&spec)
        .run();
    run.expect_code(1);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "checks_failed", "{r}");
    assert_eq!(r["runner_git"]["changed"], false);
    assert!(
        r["runner_git"].get("branch").is_none(),
        "no branch without changes"
    );
    assert_eq!(patch_of(&r), "", "the patch file is written, empty");
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .contains("git.require_changes"),
        "{r}"
    );
    assert_eq!(r["runner_checks"][0]["name"], "git.require_changes");
    let xml = read(&junit);
    assert!(
        xml.contains(r#"<property name="git.changed" value="false"/>"#),
        "{xml}"
    );
    assert!(xml.contains(r#"name="git.require_changes""#), "{xml}");
    assert!(repo.git(&["branch", "--list", "runner/*"]).is_empty());

    // Without require_changes the same run succeeds, and still says nothing changed.
    let spec = write_spec(repo.path(), &named_task("noop", ""));
    let mock = MockAnthropic::start(vec![text_turn("nothing to do")]);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert_eq!(run.result()["runner_git"]["changed"], false);
    assert!(
        run.stderr.contains("task changed nothing"),
        "{}",
        run.stderr
    );
    mock.assert_clean();
}

#[test]
fn patch_dir_flag_and_isolate_single_task_and_verify_in_worktree() {
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        &named_task(
            "iso",
            "permissions:\n  mode: bypassPermissions\ngit:\n  isolate: true\nverify:\n  - name: sees-edit\n    run: grep -q changed README.md && pwd\n",
        ),
    );
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "toolu_1",
            "Bash",
            json!({"command": "echo changed > README.md"}),
        ),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let patches = out.path().join("my-patches");
    let run = exec(&mock, &repo, &out)
        .json()
        .arg("--patch-dir")
        .arg(&patches)
        .arg(&spec)
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_git"]["isolated"], true);
    // The check ran in the worktree, which saw the edit; the repository did not.
    assert_eq!(r["runner_checks"][0]["passed"], true, "{r}");
    let check_cwd = r["runner_checks"][0]["output"]
        .as_str()
        .unwrap()
        .trim()
        .to_string();
    assert!(
        Path::new(&check_cwd).starts_with(out.transcripts()),
        "{check_cwd}"
    );
    assert_eq!(repo.read("README.md"), "# test repo\n");
    let patch = read(&patches.join("iso.patch"));
    assert!(patch.contains("-# test repo\n+changed\n"), "{patch}");
    assert_eq!(worktrees(&repo).len(), 1);
    mock.assert_clean();
}

#[test]
fn git_settings_outside_a_repository_are_a_spec_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(dir.path(), &named_task("t", "git:\n  isolate: true\n"));
    let o = Runner::new()
        .current_dir(dir.path())
        .args(["exec", "--transcript-dir"])
        .arg(dir.path().join("out"))
        .arg(&spec)
        .run();
    assert_eq!(o.code, Some(2));
    let stderr = &o.stderr;
    assert!(
        stderr.contains("task.yaml:5:") && stderr.contains("`git.isolate` needs a git repository"),
        "{stderr}"
    );
}

#[test]
fn interrupted_isolated_task_keeps_its_worktree() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: Resp::new().text("slow answer").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &named_task("sig", "git:\n  isolate: true\n"));
    let started = spawn_exec(&mock, &repo, &out, &spec);
    assert!(mock.wait_for_requests(1, Duration::from_secs(30)));
    started.signal(Signal::SIGINT);
    let run = started.wait();
    run.expect_code(130);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "interrupted");
    let kept = r["runner_git"]["worktree"]
        .as_str()
        .expect("worktree kept")
        .to_string();
    assert!(Path::new(&kept).join("README.md").exists());
    let t = transcript_of(&r);
    assert!(
        t.iter()
            .any(|rec| rec["subtype"] == "runner_worktree" && rec["worktree"] == kept.as_str()),
        "{t:?}"
    );
    assert_eq!(worktrees(&repo).len(), 2);
    mock.assert_clean();
}

#[test]
fn isolated_workdir_must_exist_in_head() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    let a = write_spec_named(&dir, "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(&dir, "b.yaml", &named_task("beta", ""));
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).arg(&a).arg(&b).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("a.yaml:")
            && run
                .stderr
                .contains("workdir `tasks` is not a directory in HEAD"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.requests().len(), 0);
}

#[test]
fn in_place_branch_commit_over_uncommitted_changes_it_depends_on() {
    let repo = TestRepo::new();
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    // Work in progress on README.md, which the task then edits further.
    repo.write("README.md", "# test repo\nwip line\n");
    let spec = write_spec(
        repo.path(),
        &named_task(
            "dep",
            "permissions:\n  mode: bypassPermissions\ngit:\n  branch: bot/dep\n",
        ),
    );
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "toolu_1",
            "Bash",
            json!({"command": "sed -i 's/wip line/wip line, finished/' README.md"}),
        ),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let r = run.result();
    let patch = patch_of(&r);
    assert!(
        patch.contains("-wip line\n+wip line, finished\n"),
        "{patch}"
    );
    // The change does not apply to HEAD alone: the work in progress is committed underneath.
    assert_eq!(r["runner_git"]["branch"], "bot/dep");
    assert_eq!(
        repo.git(&["log", "--format=%s", "bot/dep"]).trim(),
        "runner: dep\nrunner: working tree before task dep\ninitial commit"
    );
    assert_eq!(repo.git(&["rev-parse", "bot/dep~2"]).trim(), head);
    assert_eq!(
        repo.git(&["show", "bot/dep:README.md"]),
        "# test repo\nwip line, finished\n"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), head);
    mock.assert_clean();
}

#[test]
fn branch_checked_out_or_shared_by_two_tasks_is_refused() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &named_task("t", "git:\n  branch: main\n"));
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).arg(&spec).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("task.yaml:5:")
            && run.stderr.contains("branch `main` is checked out in"),
        "{}",
        run.stderr
    );
    let a = write_spec_named(
        repo.path(),
        "a.yaml",
        &named_task("alpha", "git:\n  branch: bot/same\n"),
    );
    let b = write_spec_named(
        repo.path(),
        "b.yaml",
        &named_task("beta", "git:\n  branch: bot/same\n"),
    );
    let run = exec(&mock, &repo, &out).arg(&a).arg(&b).run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("git.branch `bot/same` is also the branch of task `alpha`"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.requests().len(), 0);
}

#[test]
fn a_repository_without_commits_is_said_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    crate::support::git(dir.path(), &["init", "-q"]);
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let out = OutDir::new();
    let run = Runner::against(&mock)
        .current_dir(dir.path())
        .args(["exec", "-p", "hi", "--transcript-dir"])
        .arg(out.path())
        .run();
    run.expect_code(0);
    assert!(
        run.stderr
            .contains("the repository has no commit yet; commit once to get patches"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("class="), "{}", run.stderr);
    mock.assert_clean();
}
