//! The layout users get: `runner exec` run from a repository's root with no
//! `--transcript-dir`, so runner's outputs — and an isolated task's worktree — lie under the
//! repository's own `.runner/`. Each task edits with Edit, Write and a Bash redirection; the
//! patches and branches must hold all three changes, and nothing may be denied.
//!
//! The other end-to-end tests write their outputs to a directory outside the repository; these
//! are the runs as the README tells users to start them.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A tool call whose input names paths under [`WORKDIR`] (replaced by the mock with the
/// task's working directory, which for an isolated task is known only when it runs). The
/// input is sent in one piece, so the token is never split.
fn call(resp: Resp, id: &str, name: &str, input: Value) -> Resp {
    resp.tool_use_fragments(id, name, &[&input.to_string()])
}

/// The task reads the file it edits, makes its three edits in one turn (Edit, Write, a Bash
/// redirection), then answers.
fn editing_conversation() -> Vec<MockTurn> {
    let read = call(
        Resp::new(),
        "toolu_read",
        "Read",
        json!({"file_path": format!("{WORKDIR}/README.md")}),
    );
    let edits = call(
        Resp::new(),
        "toolu_edit",
        "Edit",
        json!({"file_path": format!("{WORKDIR}/README.md"), "old_string": "# test repo", "new_string": "# edited repo"}),
    );
    let edits = call(
        edits,
        "toolu_write",
        "Write",
        json!({"file_path": format!("{WORKDIR}/src/new.txt"), "content": "written by Write\n"}),
    );
    let edits = call(
        edits,
        "toolu_bash",
        "Bash",
        json!({"command": "echo redirected > bash.txt"}),
    );
    vec![read.turn(), edits.turn(), text_turn("done")]
}

/// A committed task spec `tasks/NAME.yaml` working on the repository's root, with `git`
/// settings `git` (YAML flow mapping). The specs are committed so the tree is clean.
fn spec(repo: &TestRepo, name: &str, git: &str) -> String {
    let rel = format!("tasks/{name}.yaml");
    repo.write(
        &rel,
        &named_task(
            name,
            &format!(
                "workdir: ..\ntools: [Read, Edit, Write, Bash]\npermissions:\n  mode: acceptEdits\ngit: {git}\n"
            ),
        ),
    );
    rel
}

/// The result object of each task (`--output-format json` prints one per line), by name.
fn results(run: &Run) -> std::collections::HashMap<String, Value> {
    run.json()
        .into_iter()
        .map(|r| (r["runner_task"].as_str().unwrap_or_default().to_string(), r))
        .collect()
}

/// The task's result shows no denial, and its patch (under the repository's
/// `.runner/patches/`, as the README says) holds the three edits.
fn check_task(repo: &TestRepo, result: &Value, name: &str) {
    assert_eq!(result["runner_outcome"], "success", "{result:#}");
    assert_eq!(
        result["permission_denials"],
        json!([]),
        "{name}: {:#}",
        result["permission_denials"]
    );
    let patch_path = repo.path().join(format!(".runner/patches/{name}.patch"));
    let patch = std::fs::read_to_string(&patch_path)
        .unwrap_or_else(|e| panic!("{}: {e}", patch_path.display()));
    check_patch_text(&patch, name);
    assert_eq!(result["runner_git"]["files_changed"], 3, "{result:#}");
}

fn check_patch_text(patch: &str, what: &str) {
    for line in [
        "+# edited repo",
        "-# test repo",
        "+written by Write",
        "+redirected",
        "b/src/new.txt",
        "b/bash.txt",
    ] {
        assert!(patch.contains(line), "{what}: {line:?} not in\n{patch}");
    }
}

/// The repository's own files are as committed: the tasks worked elsewhere.
fn assert_untouched(repo: &TestRepo) {
    assert_eq!(repo.read("README.md"), "# test repo\n");
    assert!(!repo.exists("src/new.txt"));
    assert!(!repo.exists("bash.txt"));
    // `.runner/` is runner's (the repository ignores it, as `runner init` sets up).
    assert_eq!(repo.status(), "");
}

fn repo_with_specs(specs: &[(&str, &str)]) -> (TestRepo, Vec<String>) {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".runner/\n");
    let rels = specs
        .iter()
        .map(|(name, git)| spec(&repo, name, git))
        .collect();
    repo.commit_all("task specs");
    (repo, rels)
}

#[test]
fn an_isolated_task_edits_from_the_repository_root() {
    let (repo, specs) = repo_with_specs(&[("edit-one", "{isolate: true, branch: true}")]);
    let mock = MockAnthropic::start(editing_conversation());
    let run = exec_in(&mock, &repo).json().args(&specs).run();
    run.expect_code(0);
    let r = results(&run);
    check_task(&repo, &r["edit-one"], "edit-one");
    // The worktree was under the repository's `.runner/`, the layout that used to deny
    // every edit.
    let transcript = r["edit-one"]["runner_transcript_path"]
        .as_str()
        .unwrap_or_default();
    assert!(
        Path::new(transcript).starts_with(repo.path().join(".runner")),
        "{transcript}"
    );
    // The branch holds the same change.
    let diff = repo.git(&["diff", "main", "runner/edit-one"]);
    check_patch_text(&diff, "branch runner/edit-one");
    assert_untouched(&repo);
    mock.assert_clean();
}

/// `runner exec tasks --jobs 2`, each task in a pooled worktree (`RUNNER_WORKTREES`: overlay
/// where runner may mount, else checkouts; or checkouts forced).
fn batch_in_default_layout(mode: &str) {
    let (repo, _) = repo_with_specs(&[
        ("batch-a", "{branch: true}"),
        ("batch-b", "{branch: true}"),
        ("batch-c", "{branch: true}"),
    ]);
    let mock = MockAnthropic::start_each(editing_conversation(), 3);
    let run = exec_in(&mock, &repo)
        .env("RUNNER_WORKTREES", mode)
        .json()
        .args(["--jobs", "2", "tasks"])
        .run();
    run.expect_code(0);
    let r = results(&run);
    assert_eq!(r.len(), 3, "{:?}", r.keys());
    for name in ["batch-a", "batch-b", "batch-c"] {
        check_task(&repo, &r[name], name);
        assert_eq!(r[name]["runner_git"]["isolated"], true);
        let diff = repo.git(&["diff", "main", &format!("runner/{name}")]);
        check_patch_text(&diff, name);
    }
    assert_untouched(&repo);
    mock.assert_clean();
}

#[test]
fn a_batch_edits_from_the_repository_root_in_pooled_worktrees() {
    batch_in_default_layout("auto");
}

#[test]
fn a_batch_edits_from_the_repository_root_in_pooled_checkouts() {
    batch_in_default_layout("checkout");
}

#[test]
fn an_in_place_task_edits_the_checkout_from_its_root() {
    let (repo, specs) = repo_with_specs(&[("in-place", "{isolate: false}")]);
    let mock = MockAnthropic::start(editing_conversation());
    let run = exec_in(&mock, &repo).json().args(&specs).run();
    run.expect_code(0);
    let r = results(&run);
    check_task(&repo, &r["in-place"], "in-place");
    assert_eq!(repo.read("README.md"), "# edited repo\n");
    assert_eq!(repo.read("src/new.txt"), "written by Write\n");
    assert_eq!(repo.read("bash.txt"), "redirected\n");
    mock.assert_clean();
}

/// runner's own output directory inside an in-place workdir stays protected: the layout fix
/// makes a root's ancestors irrelevant, not `.runner` below the root.
#[test]
fn runner_outputs_below_the_workdir_stay_protected() {
    let (repo, specs) = repo_with_specs(&[("poke", "{isolate: false}")]);
    let mock = MockAnthropic::start(vec![
        call(
            Resp::new(),
            "toolu_1",
            "Write",
            json!({"file_path": format!("{WORKDIR}/.runner/patches/poke.patch"), "content": "forged\n"}),
        )
        .turn(),
        text_turn("done"),
    ]);
    let run = exec_in(&mock, &repo).json().args(&specs).run();
    // The only write was denied and nothing changed: the task did not do its work.
    run.expect_code(5);
    let r = &results(&run)["poke"];
    assert_eq!(r["runner_outcome"], "denied", "{r:#}");
    let reason = r["permission_denials"][0]["runner_reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("`.runner` is a protected path"), "{reason}");
    mock.assert_clean();
}

/// A task whose every write was denied and that changed nothing ends `denied` (exit 5) without
/// `fail_on_denial`; one denied something but did its work keeps `success`.
#[test]
fn every_write_denied_is_not_success() {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".runner/\n");
    let rel = "tasks/no-rules.yaml";
    repo.write(
        rel,
        &named_task(
            "no-rules",
            "workdir: ..\ntools: [Read, Edit, Write, Bash]\ngit: {isolate: true}\n",
        ),
    );
    repo.commit_all("spec");
    let mock = MockAnthropic::start(editing_conversation());
    let run = exec_in(&mock, &repo).json().arg(rel).run();
    run.expect_code(5);
    let r = &results(&run)["no-rules"];
    assert_eq!(r["runner_outcome"], "denied", "{r:#}");
    assert_eq!(r["permission_denials"].as_array().map(Vec::len), Some(3));
    let why = r["errors"][0].as_str().unwrap_or_default();
    assert!(
        why.contains(
            "the task changed nothing: every file write it attempted was denied (3 in all)"
        ),
        "{why}"
    );
    mock.assert_clean();

    // The same, but Edit is allowed: the other two denials no longer make it a failure.
    let rel = "tasks/some-rules.yaml";
    repo.write(
        rel,
        &named_task(
            "some-rules",
            "workdir: ..\ntools: [Read, Edit, Write, Bash]\npermissions:\n  allow: [\"Edit(./README.md)\"]\ngit: {isolate: true}\n",
        ),
    );
    repo.commit_all("spec 2");
    let mock = MockAnthropic::start(editing_conversation());
    let run = exec_in(&mock, &repo).json().arg(rel).run();
    run.expect_code(0);
    let r = &results(&run)["some-rules"];
    assert_eq!(r["runner_outcome"], "success", "{r:#}");
    assert_eq!(r["permission_denials"].as_array().map(Vec::len), Some(2));
    mock.assert_clean();
}

/// Tasks that edit one working tree at once are refused before any request.
#[test]
fn in_place_tasks_in_parallel_are_refused() {
    let (repo, _) = repo_with_specs(&[
        ("shared-a", "{isolate: false}"),
        ("shared-b", "{isolate: false}"),
    ]);
    let mock = MockAnthropic::start(vec![]);
    let run = exec_in(&mock, &repo).args(["--jobs", "2", "tasks"]).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("both work in place")
            && run.stderr.contains("git: {isolate: true}")
            && run.stderr.contains("--jobs 1"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
    // One at a time they may share it.
    let mock = MockAnthropic::start(vec![text_turn("a"), text_turn("b")]);
    exec_in(&mock, &repo)
        .args(["--jobs", "1", "tasks"])
        .run()
        .expect_code(0);
    mock.assert_clean();
}
