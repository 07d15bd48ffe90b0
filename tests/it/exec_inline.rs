//! End-to-end: a task given inline (`runner exec -p PROMPT` and its flags), the spellings
//! people already type (`--allowedTools`, `--max-budget-usd`, `--json`, ...), `-v`/`-q`.

use crate::support::*;
use serde_json::json;

#[test]
fn an_inline_task_is_built_from_the_flags() {
    let repo = TestRepo::new();
    repo.write("app/notes.txt", "hello\n");
    repo.write("docs/extra.md", "extra\n");
    let notes = repo.path().join("app/notes.txt");
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Read", json!({"file_path": notes})),
        text_turn("read it"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args([
            "-p",
            "read the notes",
            "--name",
            "notes",
            "-C",
            "app",
            "--tools",
            "Read,Grep",
            "--append-system-prompt",
            "Answer in one line.",
            "--add-dir",
            "docs",
        ])
        .json()
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_task"], "notes");
    assert_eq!(r["result"], "read it");
    let req = mock.request(0);
    assert_eq!(req.tool_names(), vec!["Read", "Grep"]);
    assert!(req.system_text().contains("Answer in one line."));
    assert_eq!(req.message_text(0), "read the notes");
    // The workdir is --cd: the file inside it is read without a rule.
    let got = mock.request(1).tool_result_text("toolu_1").unwrap();
    assert!(got.contains("hello"), "{got}");
    mock.assert_clean();
}

#[test]
fn an_inline_task_is_named_inline_by_default_and_takes_an_output_schema() {
    let repo = TestRepo::new();
    repo.write(
        "schema.json",
        r#"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#,
    );
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_so",
        "StructuredOutput",
        json!({"ok": true}),
    )]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["--prompt", "is it ok?", "--output-schema", "schema.json"])
        .json()
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_task"], "inline");
    assert_eq!(r["structured_output"], json!({"ok": true}));
    assert!(
        mock.request(0)
            .tool_names()
            .contains(&"StructuredOutput".to_string())
    );
    mock.assert_clean();
}

#[test]
fn inline_errors_name_the_flag_and_suggest() {
    let repo = TestRepo::new();
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "-p", "hi", "--tools", "Read,Bashh"])
        .run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("--tools: unknown tool `Bashh`; expected one of")
            && run.stderr.contains("help: did you mean `Bash`?"),
        "{}",
        run.stderr
    );
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "-p", "hi", "-C", "no/such/dir"])
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("--cd: workdir no/such/dir"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_prompt_and_spec_paths_do_not_mix() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "-p", "hi"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("-p/--prompt runs one task built from the flags"),
        "{}",
        run.stderr
    );
    // Inline-only flags need -p.
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "--cd", "x"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(run.stderr.contains("--prompt"), "{}", run.stderr);
}

#[test]
fn a_prompt_given_as_a_path_gets_a_hint() {
    let repo = TestRepo::new();
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "fix the tests"])
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains(
            "help: to run a prompt without a spec file, use `runner exec -p \"fix the tests\"`"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn alias_allowed_tools_camel_case() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "touch made.txt"})),
        text_turn("ok"),
    ]);
    let out = OutDir::new();
    exec(&mock, &repo, &out)
        .args(["-p", "make it", "--allowedTools", "Bash(touch:*)"])
        .run()
        .expect_code(0);
    assert!(repo.exists("made.txt"));
    mock.assert_clean();
}

#[test]
fn alias_disallowed_tools_camel_case() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let a = repo.path().join("a.txt");
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Read", json!({"file_path": a})),
        text_turn("ok"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["-p", "read", "--disallowedTools", "Read"])
        .json()
        .run();
    run.expect_code(0);
    // A bare deny rule takes the tool off the offer, and the call is refused.
    assert!(!mock.request(0).tool_names().contains(&"Read".to_string()));
    let refused = mock.request(1).tool_result("toolu_1").unwrap().clone();
    assert_eq!(refused["is_error"], json!(true), "{refused}");
}

#[test]
fn alias_max_budget_usd() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Glob", json!({"pattern": "*"})),
        text_turn("never asked"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["-p", "look", "--max-budget-usd", "0.00000001"])
        .json()
        .run();
    run.expect_code(3);
    assert_eq!(run.result()["runner_outcome"], "budget_cost");
}

#[test]
fn alias_json_for_output_format_json() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).args(["-p", "hi", "--json"]).run();
    run.expect_code(0);
    assert_eq!(run.result()["result"], "done");
    // --json and --output-format are one choice.
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "-p", "hi", "--json", "--output-format", "text"])
        .run();
    run.expect_code(2);
}

#[test]
fn verbose_and_quiet_exist() {
    let repo = TestRepo::new();
    // `-v` is a flag of its own: clap no longer suggests --version for it.
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "-v"])
        .run();
    run.expect_code(2);
    assert!(!run.stderr.contains("--version"), "{}", run.stderr);
    assert!(run.stderr.contains("required"), "{}", run.stderr);

    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let quiet = exec(&mock, &repo, &out).args(["-q", "-p", "hi"]).run();
    quiet.expect_code(0);
    assert!(!quiet.stderr.contains("task started"), "{}", quiet.stderr);
    assert_eq!(quiet.stdout.trim(), "done");

    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let verbose = exec(&mock, &repo, &out).args(["-v", "-p", "hi"]).run();
    verbose.expect_code(0);
    assert!(verbose.stderr.contains("DEBUG"), "{}", verbose.stderr);
}

#[test]
fn debug_logs_leave_out_the_shell_parser() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo hi there"})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .env("RUNNER_LOG", "debug")
        .args(["-p", "hi"])
        .run();
    run.expect_code(0);
    assert!(run.stderr.contains("DEBUG"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("TOKEN") && !run.stderr.contains("Tokenizing"),
        "the shell parser's logs stay off: {}",
        run.stderr
    );
}

#[test]
fn help_lists_the_aliases() {
    let run = Runner::new().args(["exec", "--help"]).run();
    run.expect_code(0);
    for alias in [
        "--allowedTools",
        "--disallowedTools",
        "--max-budget-usd",
        "--json",
    ] {
        assert!(run.stdout.contains(alias), "{alias}: {}", run.stdout);
    }
}
