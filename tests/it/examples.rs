//! The example specs in tasks/: every spec validates, and the offline examples run (replay
//! cassettes, real tools, real checks, real git worktrees) in a copy of tasks/examples.
//!
//! Re-record a cassette with: `cargo test --test examples -- --ignored record_`

use std::path::{Path, PathBuf};

use crate::support::*;
use serde_json::{Value, json};

fn tasks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks")
}

fn examples_dir() -> PathBuf {
    tasks_dir().join("examples")
}

/// Every `*.yaml` / `*.yml` under `dir`, recursively, sorted.
fn specs_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(specs_under(&path));
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn every_spec_under_tasks_validates() {
    let specs = specs_under(&tasks_dir());
    assert!(specs.len() >= 5, "{specs:?}");
    for spec in &specs {
        let out = Runner::new().arg("validate").arg(spec).run();
        assert_eq!(out.code, Some(0), "{}: {}", spec.display(), out.stderr);
    }
}

/// A git repository holding a copy of tasks/examples, committed.
fn examples_repo() -> TestRepo {
    let repo = TestRepo::new();
    copy_dir(&examples_dir(), &repo.path().join("tasks/examples"));
    repo.write(".gitignore", ".runner/\ntarget/\n");
    repo.commit_all("examples");
    repo
}

fn run_example(repo: &TestRepo, out: &OutDir, spec: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let o = Runner::new()
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json", "--transcript-dir"])
        .arg(out.transcripts())
        .args(extra)
        .arg(format!("tasks/examples/{spec}"))
        .run();
    let stderr = &o.stderr;
    let code = o.code.unwrap_or(-1);
    assert_eq!(code, 0, "{spec}: {stderr}");
    (code, o.json())
}

fn patch(out: &OutDir, task: &str) -> String {
    std::fs::read_to_string(
        out.transcripts()
            .join("patches")
            .join(format!("{task}.patch")),
    )
    .unwrap()
}

#[test]
fn fix_clippy_example_fixes_the_warnings_in_a_worktree() {
    let repo = examples_repo();
    let out = OutDir::new();
    let (_, results) = run_example(&repo, &out, "fix-clippy.yaml", &[]);
    let r = &results[0];
    assert_eq!(r["runner_outcome"], json!("success"), "{r}");
    let checks = r["runner_checks"].as_array().unwrap();
    assert_eq!(checks[0]["name"], json!("clippy clean"));
    assert_eq!(checks[0]["passed"], json!(true), "{r}");
    let p = patch(&out, "fix-clippy");
    assert!(
        p.contains("-pub fn is_enabled(features: &Vec<String>, name: &str) -> bool {"),
        "{p}"
    );
    assert!(
        p.contains("+pub fn is_enabled(features: &[String], name: &str) -> bool {"),
        "{p}"
    );
    assert!(
        p.contains("+    features.iter().any(|f| f == name)\n"),
        "{p}"
    );
    // The sample itself was not touched: the task ran in a worktree.
    assert_eq!(repo.status(), "");
    assert!(
        repo.read("tasks/examples/clippy-sample/src/lib.rs")
            .contains("&Vec<String>")
    );
}

/// The README's command as users run it: from the repository's root, no `--transcript-dir`,
/// so the task's worktree lies under the repository's own `.runner/`.
#[test]
fn fix_clippy_example_in_the_default_layout() {
    let repo = examples_repo();
    let o = Runner::new()
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(repo.path())
        .args(["exec", "tasks/examples/fix-clippy.yaml"])
        .run();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stderr.contains("denied"), "{}", o.stderr);
    let p = std::fs::read_to_string(repo.path().join(".runner/patches/fix-clippy.patch")).unwrap();
    assert!(
        p.contains("+pub fn is_enabled(features: &[String], name: &str) -> bool {"),
        "{p}"
    );
    assert_eq!(repo.status(), "");
}

/// A replay whose conversation drifts from the recording (here: the Edit it recorded is
/// denied now) says where it departed and why when the cassette runs out.
#[test]
fn a_drifting_replay_names_the_first_departure() {
    let repo = examples_repo();
    let spec = repo.read("tasks/examples/fix-clippy.yaml");
    repo.write(
        "tasks/examples/fix-clippy.yaml",
        &spec.replace("mode: acceptEdits", "mode: default"),
    );
    repo.commit_all("no edits allowed");
    let out = OutDir::new();
    let o = Runner::new()
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json", "--transcript-dir"])
        .arg(out.transcripts())
        .arg("tasks/examples/fix-clippy.yaml")
        .run();
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    let r = &o.json()[0];
    let error = r["errors"][0].as_str().unwrap_or_default();
    assert!(error.contains("is exhausted"), "{error}");
    assert!(
        error.contains("The conversation first departed from the recording at request 4: the result of Edit call toolu_03Edit differs: recorded a success, now an error: \"Permission denied: Edit of "),
        "{error}"
    );
}

#[test]
fn review_example_reviews_without_writing() {
    let repo = examples_repo();
    let out = OutDir::new();
    let (_, results) = run_example(&repo, &out, "review-diff.yaml", &[]);
    let r = &results[0];
    assert_eq!(r["runner_outcome"], json!("success"), "{r}");
    let answer = r["result"].as_str().unwrap();
    assert!(answer.contains("Verdict: request changes"), "{answer}");
    assert!(answer.contains("src/lib.rs:14"), "{answer}");
    assert_eq!(r["permission_denials"], json!([]));
    // The real tools read the real diff.
    let records = read_json_lines(Path::new(r["runner_transcript_path"].as_str().unwrap()));
    let text = serde_json::to_string(&records).unwrap();
    assert!(text.contains("pub fn median(values: &mut Vec<f64>) -> f64"));
    assert_eq!(repo.status(), "");
}

#[test]
fn crate_matrix_example_runs_one_task_per_crate() {
    let repo = examples_repo();
    let out = OutDir::new();
    let (_, results) = run_example(&repo, &out, "crate-matrix.yaml", &["--jobs", "2"]);
    let mut names: Vec<&str> = results
        .iter()
        .map(|r| r["runner_task"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["edition-alpha", "edition-beta"]);
    for r in &results {
        assert_eq!(r["runner_outcome"], json!("success"), "{r}");
        assert_eq!(r["runner_git"]["isolated"], json!(true), "{r}");
        let task = r["runner_task"].as_str().unwrap();
        let krate = task.trim_start_matches("edition-");
        let p = patch(&out, task);
        assert!(
            p.contains(&format!(
                "+++ b/tasks/examples/workspace-sample/crates/{krate}/Cargo.toml"
            )),
            "{p}"
        );
        assert!(p.contains("+edition = \"2024\""), "{p}");
        assert_eq!(p.matches("+++ ").count(), 1, "only its own crate: {p}");
    }
    assert_eq!(repo.status(), "");
}

#[test]
fn structured_output_example_reports_the_todos_as_json() {
    let repo = examples_repo();
    let out = OutDir::new();
    let file = out.path().join("todos.json");
    let file_arg = file.to_str().unwrap().to_string();
    let (_, results) = run_example(
        &repo,
        &out,
        "todo-report.yaml",
        &["--output-file", &file_arg],
    );
    let r = &results[0];
    assert_eq!(r["runner_outcome"], json!("success"), "{r}");
    let expected = json!({"todos": [{
        "file": "src/lib.rs",
        "line": 6,
        "text": "handle overflow explicitly instead of relying on debug-build panics."
    }]});
    assert_eq!(r["structured_output"], expected);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written, expected);
}

// ---------------------------------------------------------------------------------------------
// Recording: each cassette is a scripted conversation served by the mock server while the
// real tools run on a copy of the example's files. The spec is recorded as a live task
// (`provider: anthropic`), outside git, as one task.

/// Record `tasks/examples/{name}.cassette.jsonl` from `script(workdir)`, where `workdir` is
/// the absolute workdir of the recording run (`workdir_rel` under a copy of tasks/examples).
fn record(
    name: &str,
    workdir_rel: &str,
    edit_spec: impl Fn(String) -> String,
    script: impl FnOnce(&str) -> Vec<MockTurn>,
) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("examples");
    copy_dir(&examples_dir(), &copy);
    let work = std::fs::canonicalize(copy.join(workdir_rel)).unwrap();
    let mock = MockAnthropic::start(script(&work.display().to_string()));
    let src = std::fs::read_to_string(examples_dir().join(format!("{name}.yaml"))).unwrap();
    let mut live = src
        .replace("provider: replay\n", "provider: anthropic\n")
        .replace(&format!("cassette: {name}.cassette.jsonl\n"), "");
    // Outside git: no worktree settings.
    if let Some(at) = live.find("\ngit:\n") {
        live.truncate(at + 1);
    }
    let spec = copy.join(format!("{name}.record.yaml"));
    std::fs::write(&spec, edit_spec(live)).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let cassette = examples_dir().join(format!("{name}.cassette.jsonl"));
    let out = Runner::against(&mock)
        .args(["exec", "--transcript-dir"])
        .arg(out_dir.path())
        .arg("--record")
        .arg(&cassette)
        .arg(&spec)
        .run();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    mock.assert_clean();
}

const MODEL: &str = "claude-sonnet-4-5-20250929";

#[test]
#[ignore = "regenerates a committed example cassette"]
fn record_fix_clippy() {
    record(
        "fix-clippy",
        "clippy-sample",
        |s| s,
        |w| {
            let lib = format!("{w}/src/lib.rs");
            vec![
                Resp::new()
                    .model(MODEL)
                    .text("I'll run clippy first to see the warnings.")
                    .tool_use("toolu_01Clippy", "Bash", json!({"command": "cargo clippy", "description": "List clippy warnings"}))
                    .usage(2200, 70)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .text("Two warnings, both in `is_enabled`: `&Vec<String>` where a slice will do (ptr_arg), and a comparison with `true` (bool_comparison). Reading the file before editing it.")
                    .tool_use("toolu_02Read", "Read", json!({"file_path": lib}))
                    .usage(3100, 90)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .tool_use(
                        "toolu_03Edit",
                        "Edit",
                        json!({
                            "file_path": lib,
                            "old_string": "pub fn is_enabled(features: &Vec<String>, name: &str) -> bool {\n    features.iter().any(|f| f == name) == true\n}",
                            "new_string": "pub fn is_enabled(features: &[String], name: &str) -> bool {\n    features.iter().any(|f| f == name)\n}"
                        }),
                    )
                    .usage(3400, 160)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .text("Checking that clippy is clean now.")
                    .tool_use("toolu_04Clippy", "Bash", json!({"command": "cargo clippy", "description": "Confirm no warnings remain"}))
                    .usage(3700, 60)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .text(
                        "Fixed both clippy warnings in src/lib.rs: `is_enabled` now takes \
                         `&[String]` instead of `&Vec<String>` (clippy::ptr_arg; callers \
                         passing `&Vec<String>` still compile), and the redundant `== true` is \
                         gone (clippy::bool_comparison). `cargo clippy` reports no warnings.",
                    )
                    .usage(3900, 80)
                    .turn(),
            ]
        },
    );
}

#[test]
#[ignore = "regenerates a committed example cassette"]
fn record_review_diff() {
    record(
        "review-diff",
        "review-sample",
        |s| s,
        |w| {
            vec![
                Resp::new()
                    .model(MODEL)
                    .text("I'll read the proposed change and the code it touches.")
                    .tool_use("toolu_01Diff", "Read", json!({"file_path": format!("{w}/change.diff")}))
                    .tool_use("toolu_02Lib", "Read", json!({"file_path": format!("{w}/src/lib.rs")}))
                    .usage(2300, 95)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .text("Checking whether anything calls `median` yet or tests it.")
                    .tool_use(
                        "toolu_03Grep",
                        "Grep",
                        json!({"pattern": "median", "path": w, "output_mode": "content", "-n": true}),
                    )
                    .usage(2900, 70)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .text(
                        "Review of change.diff (adds `median` to src/lib.rs):\n\n\
                         1. src/lib.rs:14: an empty slice panics. `mid` is 0, the even branch \
                         reads `values[mid - 1]`, and the subtraction underflows. `average` \
                         returns `None` for empty input; `median` should return `Option<f64>` \
                         the same way.\n\
                         2. src/lib.rs:11: `partial_cmp(b).unwrap()` panics on a NaN. Sort with \
                         `values.sort_by(f64::total_cmp)`.\n\
                         3. src/lib.rs:10: `&mut Vec<f64>` reorders the caller's data as a side \
                         effect and forces a Vec. Take `&[f64]` and sort a copy \
                         (`let mut v = values.to_vec();`).\n\
                         4. Nothing tests `median`: add cases for empty, odd, even and NaN \
                         input.\n\n\
                         Verdict: request changes.",
                    )
                    .usage(3300, 260)
                    .turn(),
            ]
        },
    );
}

#[test]
#[ignore = "regenerates a committed example cassette"]
fn record_crate_matrix() {
    record(
        "crate-matrix",
        "workspace-sample/crates/alpha",
        |s| {
            s.replace(
                "matrix:\n  glob: workspace-sample/crates/*",
                "matrix:\n  - {path: workspace-sample/crates/alpha, basename: alpha}\n#",
            )
        },
        |w| {
            let manifest = format!("{w}/Cargo.toml");
            vec![
                Resp::new()
                    .model(MODEL)
                    .tool_use("toolu_01Read", "Read", json!({"file_path": manifest}))
                    .usage(2100, 50)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .tool_use(
                        "toolu_02Edit",
                        "Edit",
                        json!({"file_path": manifest, "old_string": "edition = \"2021\"", "new_string": "edition = \"2024\""}),
                    )
                    .usage(2300, 80)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .tool_use(
                        "toolu_03Check",
                        "Bash",
                        json!({"command": "cargo check --quiet", "description": "Check the crate under edition 2024"}),
                    )
                    .usage(2500, 50)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .text(
                        "Moved the crate to edition 2024 (`edition = \"2024\"` in its \
                         Cargo.toml). `cargo check` passes; no code change was needed.",
                    )
                    .usage(2650, 45)
                    .turn(),
            ]
        },
    );
}

#[test]
#[ignore = "regenerates a committed example cassette"]
fn record_todo_report() {
    record(
        "todo-report",
        "sample",
        |s| s,
        |w| {
            vec![
                Resp::new()
                    .model(MODEL)
                    .tool_use(
                        "toolu_01Grep",
                        "Grep",
                        json!({"pattern": "TODO", "path": w, "output_mode": "content", "-n": true}),
                    )
                    .usage(2400, 60)
                    .turn(),
                Resp::new()
                    .model(MODEL)
                    .tool_use(
                        "toolu_02Out",
                        "StructuredOutput",
                        json!({"todos": [{
                            "file": "src/lib.rs",
                            "line": 6,
                            "text": "handle overflow explicitly instead of relying on debug-build panics."
                        }]}),
                    )
                    .usage(2600, 70)
                    .turn(),
            ]
        },
    );
}
