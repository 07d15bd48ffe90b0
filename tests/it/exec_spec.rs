//! End-to-end: invalid input stops everything before any request (exit 2, `file:line:col`
//! on stderr), `runner validate`, and `runner schema`.

use crate::support::*;

/// Run `runner exec` on `specs` (already written in `repo`); the mock must get nothing.
fn exec_expect_invalid(repo: &TestRepo, specs: &[&std::path::Path]) -> Run {
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let args: Vec<&str> = specs.iter().map(|p| p.to_str().unwrap()).collect();
    let run = exec(&mock, repo, &out).args(&args).run();
    run.expect_code(2);
    assert!(mock.requests().is_empty(), "a request was sent");
    assert_eq!(run.stdout, "", "stdout carries nothing");
    assert!(
        run.stderr.contains("nothing was run"),
        "stderr: {}",
        run.stderr
    );
    assert!(!out.transcripts().exists(), "no transcript directory");
    mock.assert_clean();
    run
}

fn assert_located(stderr: &str, file: &str, line: usize, col: usize, what: &str) {
    let loc = format!("{file}:{line}:{col}: ");
    assert!(stderr.contains(&loc), "expected {loc} in stderr:\n{stderr}");
    assert!(
        stderr.contains(what),
        "expected {what:?} in stderr:\n{stderr}"
    );
}

#[test]
fn tab_indentation() {
    let repo = TestRepo::new();
    let p = write_spec(
        repo.path(),
        "name: a\nprompt: hi\nlimits:\n\tmax_turns: 3\n",
    );
    let run = exec_expect_invalid(&repo, &[&p]);
    assert_located(&run.stderr, "task.yaml", 4, 1, "tab");
}

#[test]
fn unknown_key() {
    let repo = TestRepo::new();
    let p = write_spec(
        repo.path(),
        "name: a\nprompt: hi\nmodle: claude-sonnet-4-5\n",
    );
    let run = exec_expect_invalid(&repo, &[&p]);
    assert_located(&run.stderr, "task.yaml", 3, 1, "unknown field `modle`");
    assert!(run.stderr.contains("`model`"), "lists what is expected");
}

#[test]
fn unknown_nested_key() {
    let repo = TestRepo::new();
    let p = write_spec(
        repo.path(),
        "name: a\nprompt: hi\npermissions:\n  mode: dontAsk\n  alow: [Edit]\n",
    );
    let run = exec_expect_invalid(&repo, &[&p]);
    assert_located(&run.stderr, "task.yaml", 5, 3, "unknown field `alow`");
}

#[test]
fn wrong_type() {
    let repo = TestRepo::new();
    let p = write_spec(
        repo.path(),
        "name: a\nprompt: hi\nlimits:\n  max_turns: lots\n",
    );
    let run = exec_expect_invalid(&repo, &[&p]);
    assert_located(&run.stderr, "task.yaml", 4, 14, "limits.max_turns");
    assert!(
        run.stderr.contains("expected a whole number"),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_prompt() {
    let repo = TestRepo::new();
    let p = write_spec(repo.path(), "name: a\nmodel: claude-sonnet-4-5\n");
    let run = exec_expect_invalid(&repo, &[&p]);
    assert!(run.stderr.contains("task.yaml:1:1: "), "{}", run.stderr);
    assert!(run.stderr.contains("prompt"), "{}", run.stderr);
}

#[test]
fn one_invalid_spec_of_two_means_nothing_runs() {
    let repo = TestRepo::new();
    let good = write_spec_named(repo.path(), "good.yaml", "name: good\nprompt: hi\n");
    let bad = write_spec_named(repo.path(), "bad.yaml", "name: bad\nprompt: [1, 2\n");
    let run = exec_expect_invalid(&repo, &[&good, &bad]);
    assert!(run.stderr.contains("bad.yaml:"), "{}", run.stderr);
    assert!(!run.stderr.contains("good.yaml:"), "{}", run.stderr);
}

#[test]
fn every_invalid_spec_is_reported() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    write_spec_named(&dir, "a.yaml", "name: a\nprompt: hi\nbogus: 1\n");
    write_spec_named(&dir, "b.yaml", "name: b\nprompt: hi\n");
    write_spec_named(&dir, "c.yaml", "name: c\n");
    let run = exec_expect_invalid(&repo, &[&dir]);
    assert!(run.stderr.contains("a.yaml:3:1: "), "{}", run.stderr);
    assert!(run.stderr.contains("c.yaml:1:1: "), "{}", run.stderr);
    assert!(run.stderr.contains("2 errors found"), "{}", run.stderr);
}

#[test]
fn duplicate_task_names_are_invalid() {
    let repo = TestRepo::new();
    let a = write_spec_named(repo.path(), "a.yaml", "name: same\nprompt: hi\n");
    let b = write_spec_named(repo.path(), "b.yaml", "name: same\nprompt: hi\n");
    let run = exec_expect_invalid(&repo, &[&a, &b]);
    assert!(run.stderr.contains("task name `same`"), "{}", run.stderr);
}

#[test]
fn invalid_permission_rule_is_invalid_input() {
    let repo = TestRepo::new();
    let p = write_spec(
        repo.path(),
        "name: a\nprompt: hi\npermissions:\n  allow: [\"Bash(git diff\"]\n",
    );
    let run = exec_expect_invalid(&repo, &[&p]);
    assert!(run.stderr.contains("task.yaml:4:"), "{}", run.stderr);
    assert!(
        run.stderr.contains("invalid permission rule"),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_api_key_is_exit_2_before_any_request() {
    let repo = TestRepo::new();
    let p = write_spec(repo.path(), "name: a\nprompt: hi\n");
    for key in [None, Some(""), Some("   ")] {
        let mock = MockAnthropic::start(vec![]);
        let out = OutDir::new();
        let cmd = exec(&mock, &repo, &out).arg(&p);
        let o = match key {
            None => cmd.env_remove("ANTHROPIC_API_KEY"),
            Some(k) => cmd.env("ANTHROPIC_API_KEY", k),
        }
        .run();
        let stderr = &o.stderr;
        assert_eq!(o.code, Some(2), "{key:?}: {stderr}");
        assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
        assert!(o.stdout.is_empty());
        assert!(mock.requests().is_empty());
        mock.assert_clean();
    }
}

#[test]
fn validate_good_and_bad_specs() {
    let repo = TestRepo::new();
    let good = write_spec_named(repo.path(), "good.yaml", "name: good\nprompt: hi\n");
    let bad = write_spec_named(
        repo.path(),
        "bad.yaml",
        "name: bad\nprompt: hi\nlimits: 3\n",
    );
    let ok = Runner::new()
        .current_dir(repo.path())
        .env_remove("ANTHROPIC_API_KEY")
        .arg("validate")
        .arg(&good)
        .run();
    assert_eq!(ok.code, Some(0), "validate needs no API key");
    let stdout = &ok.stdout;
    assert!(stdout.contains("good.yaml: ok (good)"), "{stdout}");

    let o = Runner::new()
        .current_dir(repo.path())
        .arg("validate")
        .arg(&good)
        .arg(&bad)
        .run();
    assert_eq!(o.code, Some(2));
    let stderr = &o.stderr;
    assert!(stderr.contains("bad.yaml:3:9: "), "{stderr}");
    assert!(!repo.exists(".runner"), "validate writes nothing");
}

#[test]
fn validate_reports_every_failing_check() {
    // `max_cost_usd` with an unpriced model is a spec error found after parsing.
    let repo = TestRepo::new();
    let a = write_spec_named(
        repo.path(),
        "a.yaml",
        "name: a\nprompt: hi\nmodel: no-such-model\nlimits:\n  max_cost_usd: 1\n",
    );
    let b = write_spec_named(
        repo.path(),
        "b.yaml",
        "name: b\nprompt: hi\nmodel: other-unknown\nlimits:\n  max_cost_usd: 1\n",
    );
    let o = Runner::new()
        .current_dir(repo.path())
        .arg("validate")
        .arg(&a)
        .arg(&b)
        .run();
    assert_eq!(o.code, Some(2));
    let stderr = &o.stderr;
    assert!(stderr.contains("a.yaml:"), "{stderr}");
    assert!(stderr.contains("b.yaml:"), "both are reported: {stderr}");
    assert!(o.stdout.is_empty(), "no `ok` line when the run is invalid");
}

#[test]
fn schema_prints_the_committed_schema() {
    let o = Runner::new().arg("schema").run();
    assert_eq!(o.code, Some(0));
    let printed: serde_json::Value =
        serde_json::from_slice(o.stdout.as_bytes()).expect("valid JSON");
    let committed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/schema/task.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(printed, committed);
    assert!(printed["properties"]["prompt"].is_object());
}
