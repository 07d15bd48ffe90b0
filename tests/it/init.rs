//! `runner init`: the starter spec validates and runs (against the local mock), `.gitignore`
//! gets `.runner/` once, `--workflow` writes the example workflow, and nothing is overwritten.

use std::path::Path;

use crate::support::*;
use serde_json::json;

fn init_in(dir: &Path, args: &[&str]) -> Run {
    Runner::new().current_dir(dir).arg("init").args(args).run()
}

fn stderr(out: &Run) -> String {
    out.stderr.clone()
}

#[test]
fn starter_spec_validates_and_runs() {
    let repo = TestRepo::new();
    let out = init_in(repo.path(), &["triage"]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Created tasks/triage.yaml"),
        "{}",
        stderr(&out)
    );
    let spec = repo.read("tasks/triage.yaml");
    assert!(
        spec.starts_with("# yaml-language-server: $schema=https://"),
        "{spec}"
    );
    assert!(spec.contains("\nname: triage\n"), "{spec}");

    let v = Runner::new()
        .current_dir(repo.path())
        .args(["validate", "tasks/triage.yaml"])
        .run();
    assert_eq!(v.code, Some(0), "{}", stderr(&v));
    assert_eq!(v.stdout, "tasks/triage.yaml: ok (triage)\n");

    // It runs as written: a read-only Bash command in the repository root (the spec's
    // workdir `..`) needs no rule, and the answer comes back.
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Bash", json!({"command": "ls"}))
            .turn(),
        text_turn("A test repository with a README."),
    ]);
    let out_dir = OutDir::new();
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json", "--transcript-dir"])
        .arg(out_dir.path())
        .arg("tasks/triage.yaml")
        .run();
    assert_eq!(run.code, Some(0), "{}", stderr(&run));
    let result = &run.json()[0];
    assert_eq!(result["runner_outcome"], json!("success"));
    assert_eq!(result["result"], json!("A test repository with a README."));
    let ls = mock.request(1).tool_result_text("toolu_1").unwrap();
    assert!(ls.contains("README.md") && ls.contains("tasks"), "{ls}");
    mock.assert_clean();
}

#[test]
fn gitignore_created_then_never_duplicated() {
    let dir = tempfile::tempdir().unwrap();
    let out = init_in(dir.path(), &[]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    assert!(dir.path().join("tasks/first-task.yaml").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
        ".runner/\n"
    );
    assert!(
        !dir.path().join(".github").exists(),
        "no workflow unless asked"
    );

    // A second starter with another name leaves .gitignore as it is.
    let out = init_in(dir.path(), &["second"]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Unchanged .gitignore"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
        ".runner/\n"
    );
}

#[test]
fn existing_gitignore_gets_the_line_appended() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "target/\n*.log").unwrap();
    let out = init_in(dir.path(), &[]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
        "target/\n*.log\n.runner/\n"
    );
}

#[test]
fn workflow_runs_the_tasks_directory_with_a_pinned_action() {
    let dir = tempfile::tempdir().unwrap();
    let out = init_in(dir.path(), &["--workflow"]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join(".github/workflows/runner.yml")).unwrap();
    let wf: serde_json::Value = yaml_serde::from_str(&text).unwrap();
    let steps = wf["jobs"]["tasks"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| s["id"] == json!("runner"))
        .expect("a runner step");
    assert_eq!(
        step["uses"],
        json!(format!(
            "{}@v{}",
            env!("CARGO_PKG_REPOSITORY").trim_start_matches("https://github.com/"),
            env!("CARGO_PKG_VERSION")
        ))
    );
    assert_eq!(step["with"]["tasks"], json!("tasks/"));
    assert_eq!(
        step["env"]["ANTHROPIC_API_KEY"],
        json!("${{ secrets.ANTHROPIC_API_KEY }}")
    );
}

#[test]
fn never_overwrites_and_writes_nothing_when_a_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join(".github/workflows/runner.yml");
    std::fs::create_dir_all(wf.parent().unwrap()).unwrap();
    std::fs::write(&wf, "mine\n").unwrap();
    let out = init_in(dir.path(), &["--workflow"]);
    assert_eq!(out.code, Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(".github/workflows/runner.yml already exists"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&wf).unwrap(), "mine\n");
    // Checked before anything was written: no spec, no .gitignore.
    assert!(!dir.path().join("tasks").exists());
    assert!(!dir.path().join(".gitignore").exists());

    let spec = dir.path().join("tasks/first-task.yaml");
    std::fs::create_dir_all(spec.parent().unwrap()).unwrap();
    std::fs::write(&spec, "name: mine\n").unwrap();
    let out = init_in(dir.path(), &[]);
    assert_eq!(out.code, Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("tasks/first-task.yaml already exists"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), "name: mine\n");
}

#[test]
fn invalid_name_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = init_in(dir.path(), &["../escape"]);
    assert_eq!(out.code, Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("invalid task name"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn job_templates_use_the_projects_own_commands_and_validate() {
    for (marker, test) in [
        (&["pyproject.toml", "uv.lock"][..], "uv run pytest"),
        (&["package.json", "pnpm-lock.yaml"], "pnpm test"),
        (&["go.mod"], "go test ./..."),
        (&["Cargo.toml"], "cargo test"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        for f in marker {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        for job in ["fix-tests", "fix-lint", "review", "docs"] {
            let out = init_in(dir.path(), &[job]);
            assert_eq!(out.code, Some(0), "{}", stderr(&out));
        }
        let fix = std::fs::read_to_string(dir.path().join("tasks/fix-tests.yaml")).unwrap();
        assert!(fix.contains(&format!("Run `{test}`")), "{fix}");
        assert!(fix.contains(&format!("run: \"{test}\"")), "{fix}");
        assert!(
            fix.contains("mode: acceptEdits") && fix.contains("Edit"),
            "{fix}"
        );
        let review = std::fs::read_to_string(dir.path().join("tasks/review.yaml")).unwrap();
        assert!(review.contains("Do not change any file"), "{review}");
        assert!(
            review.contains("tools: [Read, Glob, Grep, Bash]"),
            "{review}"
        );
        if test != "cargo test" {
            for f in ["fix-tests", "fix-lint", "review", "docs"] {
                let spec = std::fs::read_to_string(dir.path().join(format!("tasks/{f}.yaml")));
                assert!(!spec.unwrap().contains("cargo"), "{f} in {marker:?}");
            }
        }
        let v = Runner::new()
            .current_dir(dir.path())
            .args(["validate", "tasks/"])
            .run();
        assert_eq!(v.code, Some(0), "{marker:?}: {}", stderr(&v));
        assert_eq!(v.stdout.lines().count(), 4, "{}", v.stdout);
    }
}

#[test]
fn workflow_alone_after_init_adds_just_the_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let out = init_in(dir.path(), &[]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    let out = init_in(dir.path(), &["--workflow"]);
    assert_eq!(out.code, Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Created .github/workflows/runner.yml"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("Created tasks/"), "{}", stderr(&out));
    // A second time, the workflow exists: nothing is overwritten.
    let out = init_in(dir.path(), &["--workflow"]);
    assert_eq!(out.code, Some(2), "{}", stderr(&out));
}
