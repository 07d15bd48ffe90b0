//! End-to-end: the habits of `claude -p` and `codex exec` — the prompt on stdin, `runner -p`
//! without a subcommand, the provider chosen from the model, Claude Code's flags, continuing a
//! run by session id or `--continue`, and the command that continues a run a limit stopped.

use std::path::PathBuf;

use crate::support::*;
use serde_json::{Value, json};

#[test]
fn the_prompt_is_read_from_stdin() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("hello"), text_turn("hello again")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["-p", "-"])
        .json()
        .run_with_stdin("Say hello.\n");
    run.expect_code(0);
    assert_eq!(run.result()["result"], "hello");
    assert_eq!(mock.request(0).message_text(0), "Say hello.");
    // A bare -p (as `cat prompt.md | claude -p`) reads stdin too.
    let run = exec(&mock, &repo, &out)
        .args(["--json", "-p"])
        .run_with_stdin("Say it again.");
    run.expect_code(0);
    assert_eq!(mock.request(1).message_text(0), "Say it again.");
    mock.assert_clean();
}

#[test]
fn an_empty_or_oversized_stdin_prompt_is_refused() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).args(["-p", "-"]).run();
    run.expect_code(2);
    assert!(run.stderr.contains("stdin was empty"), "{}", run.stderr);
    let run = exec(&mock, &repo, &out)
        .args(["-p", "-"])
        .run_with_stdin(vec![b'a'; (1 << 20) + 1]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("larger than 1048576 bytes"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.served(), 0);
}

#[test]
fn runner_p_without_a_subcommand_is_exec() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("hi there")]);
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["-p", "hi", "--output-format", "json"])
        .run();
    run.expect_code(0);
    assert_eq!(run.result()["result"], "hi there");
    assert_eq!(mock.request(0).message_text(0), "hi");
    // Help without a subcommand is still the overview.
    let help = Runner::new().arg("--help").run();
    help.expect_code(0);
    assert!(help.stdout.contains("Commands:"), "{}", help.stdout);
}

#[test]
fn the_provider_follows_the_model_name_or_the_flag() {
    let mock = MockOpenai::start(vec![
        OaResp::new()
            .text("from openai")
            .usage(Some((10, 2)))
            .turn(),
        OaResp::new().text("again").usage(Some((10, 2))).turn(),
    ]);
    let repo = TestRepo::new();
    let run = Runner::against(&mock)
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(repo.path())
        .args(["exec", "-p", "hi", "--model", "gpt-4o", "--json"])
        .run();
    run.expect_code(0);
    assert_eq!(run.result()["result"], "from openai");
    assert!(
        run.stderr
            .contains("provider openai (from the model name `gpt-4o`"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.request(0).body["model"], "gpt-4o");
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .args([
            "-p",
            "hi",
            "--provider",
            "openai",
            "--model",
            "local-llm",
            "--json",
        ])
        .run();
    run.expect_code(0);
    assert_eq!(mock.request(1).body["model"], "local-llm");
    // openai without a model is refused before anything runs.
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["-p", "hi", "--provider", "openai"])
        .run();
    run.expect_code(2);
    assert!(run.stderr.contains("needs --model"), "{}", run.stderr);
    mock.assert_clean();
}

#[test]
fn claude_code_flags_are_taken() {
    let repo = TestRepo::new();
    let mcp = repo.write(
        "mcp.json",
        &json!({"mcpServers": {"stub": {"command": "bash", "args": [mcp_stub()]}}}).to_string(),
    );
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo skipped"})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args([
            "-p",
            "go",
            "--dangerously-skip-permissions",
            "--fallback-model",
            "claude-haiku-4-5",
            "--append-system-prompt",
            "Be brief.",
            "--mcp-config",
        ])
        .arg(&mcp)
        .json()
        .run();
    run.expect_code(0);
    assert!(run.stderr.contains("bypassPermissions"), "{}", run.stderr);
    let req = mock.request(0);
    assert!(req.system_text().contains("Be brief."));
    assert!(req.tool_names().contains(&"mcp__stub__echo".to_string()));
    // bypassPermissions: Bash ran without an allow rule.
    let got = mock.request(1).tool_result_text("toolu_1").unwrap();
    assert!(got.contains("skipped"), "{got}");
    mock.assert_clean();
}

#[test]
fn system_prompt_flags_replace_the_instructions_inline_and_in_a_spec() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("inline"), text_turn("spec")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["-p", "go", "--system-prompt", "You write release notes."])
        .json()
        .run();
    run.expect_code(0);
    let system = mock.request(0).system_text();
    assert!(system.starts_with("You write release notes."), "{system}");
    assert!(!system.contains("nobody will answer"), "{system}");
    assert!(system.contains("# Environment"), "{system}");
    // On spec files both flags replace the spec's fields.
    let spec = write_spec(
        repo.path(),
        "name: notes\nprompt: go\nsystem_prompt: From the spec.\nsystem_prompt_append: Spec append.\n",
    );
    let run = exec_in(&mock, &repo)
        .arg(&spec)
        .args([
            "--system-prompt",
            "From the flag.",
            "--append-system-prompt",
            "Flag append.",
        ])
        .run();
    run.expect_code(0);
    let system = mock.request(1).system_text();
    assert!(system.starts_with("From the flag."), "{system}");
    assert!(system.trim_end().ends_with("Flag append."), "{system}");
    assert!(
        !system.contains("From the spec") && !system.contains("Spec append"),
        "{system}"
    );
    mock.assert_clean();
}

#[test]
fn system_prompt_files_are_read_like_claude_codes() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    std::fs::write(repo.path().join("system.md"), "You write release notes.\n").unwrap();
    std::fs::write(repo.path().join("append.md"), "Keep it short.\n").unwrap();
    let run = exec(&mock, &repo, &out)
        .args(["-p", "go", "--system-prompt-file"])
        .arg(repo.path().join("system.md"))
        .arg("--append-system-prompt-file")
        .arg(repo.path().join("append.md"))
        .run();
    run.expect_code(0);
    let system = mock.request(0).system_text();
    assert!(system.starts_with("You write release notes."), "{system}");
    assert!(system.trim_end().ends_with("Keep it short."), "{system}");
    mock.assert_clean();
    // A missing file is invalid input, named; the text and the file flag together are refused.
    let run = Runner::new()
        .args([
            "exec",
            "-p",
            "go",
            "--system-prompt-file",
            "/nonexistent/system.md",
        ])
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("/nonexistent/system.md"),
        "{}",
        run.stderr
    );
    let run = Runner::new()
        .args([
            "exec",
            "-p",
            "go",
            "--system-prompt",
            "a",
            "--system-prompt-file",
            "b",
        ])
        .run();
    run.expect_code(2);
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
}

#[test]
fn other_tools_flags_name_what_to_use_instead() {
    for (flag, instead) in [
        ("--json-schema", "--output-schema FILE"),
        ("--input-format", "-p -"),
        ("--full-auto", "--permission-mode acceptEdits"),
    ] {
        let run = Runner::new().args(["exec", "-p", "hi", flag, "x"]).run();
        run.expect_code(2);
        assert!(run.stderr.contains(instead), "{flag}: {}", run.stderr);
        assert!(!run.stderr.contains("similar argument"), "{}", run.stderr);
    }
}

/// A run in `repo` (default transcript directory) that takes one tool turn and stops at
/// `max_turns: 1`.
fn stopped_run(mock: &MockAnthropic, repo: &TestRepo) -> (Run, Value) {
    let spec = write_spec(
        repo.path(),
        "name: resumable\nprompt: do the work\npermissions:\n  allow: [\"Bash(echo:*)\"]\nlimits:\n  max_turns: 1\n",
    );
    let run = exec_in(mock, repo).arg(&spec).run();
    run.expect_code(3);
    let session = repo
        .transcript()
        .expect("transcript")
        .iter()
        .find_map(|r| r["sessionId"].as_str().map(str::to_string))
        .expect("session id");
    (run, json!(session))
}

#[test]
fn a_limit_stop_says_how_to_continue_and_resume_takes_the_session_id() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("finished"),
    ]);
    let (run, session) = stopped_run(&mock, &repo);
    let session = session.as_str().unwrap().to_string();
    let expected = format!("runner resume {} --max-turns 11", &session[..8]);
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("To continue: {expected}")),
        "{}",
        run.stdout
    );
    // A prefix of the session id finds the run under .runner/.
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["resume", &session[..6], "--max-turns", "11", "--json"])
        .run();
    run.expect_code(0);
    assert_eq!(run.result()["result"], "finished");
    assert_eq!(run.result()["session_id"], session.as_str());
    let unknown = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["resume", "ffff0000"])
        .run();
    unknown.expect_code(2);
    assert!(
        unknown
            .stderr
            .contains("neither a transcript file nor the session id"),
        "{}",
        unknown.stderr
    );
    mock.assert_clean();
}

#[test]
fn continue_picks_the_newest_run() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("continued"),
    ]);
    let (_, session) = stopped_run(&mock, &repo);
    let run = exec_in(&mock, &repo)
        .args(["--continue", "--max-turns", "5", "--json"])
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["result"], "continued");
    assert_eq!(r["session_id"], session);
    let t = PathBuf::from(r["runner_transcript_path"].as_str().unwrap());
    assert!(t.starts_with(std::fs::canonicalize(repo.path()).unwrap().join(".runner")));
    mock.assert_clean();
}
