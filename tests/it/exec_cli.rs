//! End-to-end: command-line overrides and spec-relative paths through the real binary.

use crate::support::*;
use serde_json::json;

#[test]
fn cli_model_and_allowed_tools_apply() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Bash", json!({"command": "echo hi there"}))
            .tool_use("toolu_2", "Bash", json!({"command": "touch made.txt"}))
            .turn(),
        text_turn("ok"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: c\nprompt: hi\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec(&mock, &repo, &out)
        .args([
            "--model",
            "claude-haiku-4-5",
            "--allowed-tools",
            "Bash(echo hi:*) Bash(touch:*)",
        ])
        .json()
        .arg(&spec)
        .run();
    run.expect_code(0);
    assert_eq!(mock.request(0).body["model"], "claude-haiku-4-5");
    let req = mock.request(1);
    assert!(
        req.tool_result_text("toolu_1")
            .unwrap()
            .contains("hi there")
    );
    assert_ne!(req.tool_result("toolu_2").unwrap()["is_error"], json!(true));
    assert!(repo.exists("made.txt"));
    let r = run.result();
    // Priced at haiku's rates: $1 in, $5 out per MTok (10 in, 5 out per response).
    let cost = r["total_cost_usd"].as_f64().unwrap();
    assert!(
        (cost - 2.0 * (10.0 * 1.0 + 5.0 * 5.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    mock.assert_clean();
}

#[test]
fn cli_permission_mode_replaces_the_specs() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "touch made.txt"})),
        text_turn("ok"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: c\nprompt: hi\n");
    let run = exec(&mock, &repo, &out)
        .args(["--permission-mode", "bypassPermissions"])
        .arg(&spec)
        .run();
    run.expect_code(0);
    assert!(repo.exists("made.txt"));
    mock.assert_clean();
}

#[test]
fn workdir_and_prompt_file_are_relative_to_the_spec() {
    let repo = TestRepo::new();
    repo.write("tasks/prompts/fix.md", "fix the thing\n");
    repo.write("project/code.txt", "code\n");
    let spec = write_spec_named(
        &repo.path().join("tasks"),
        "t.yaml",
        "name: rel\nprompt_file: prompts/fix.md\nworkdir: ../project\n",
    );
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Glob", json!({"pattern": "*.txt"})),
        tool_turn("toolu_2", "Bash", json!({"command": "pwd"})),
        text_turn("ok"),
    ]);
    let out = OutDir::new();
    // Run from somewhere else entirely.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Runner::against(&mock)
        .current_dir(elsewhere.path())
        .arg("exec")
        .arg("--transcript-dir")
        .arg(out.transcripts())
        .arg(&spec)
        .run();
    o.expect_code(0);
    assert!(mock.request(0).message_text(0).starts_with("fix the thing"));
    let project = std::fs::canonicalize(repo.path().join("project")).unwrap();
    assert!(
        mock.request(0)
            .system_text()
            .contains(project.to_str().unwrap()),
        "system prompt names the workdir"
    );
    assert!(
        mock.request(1)
            .tool_result_text("toolu_1")
            .unwrap()
            .contains("code.txt")
    );
    assert_eq!(
        mock.request(2).tool_result_text("toolu_2").unwrap().trim(),
        project.to_str().unwrap()
    );
    assert!(
        !elsewhere.path().join(".runner").exists(),
        "--transcript-dir used"
    );
    mock.assert_clean();
}

#[test]
fn default_transcript_dir_is_dot_runner_in_the_current_directory() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let spec = write_spec(repo.path(), "name: d\nprompt: hi\n");
    let o = exec_in(&mock, &repo).json().arg(&spec).run();
    assert_eq!(o.code, Some(0));
    let r = o.json().remove(0);
    let tp = std::path::PathBuf::from(r["runner_transcript_path"].as_str().unwrap());
    let dot = std::fs::canonicalize(repo.path().join(".runner")).unwrap();
    assert!(tp.starts_with(&dot), "{}", tp.display());
    assert_eq!(
        std::fs::read_to_string(dot.join(".gitignore")).unwrap(),
        "*\n"
    );
    assert_eq!(
        repo.status(),
        "?? task.yaml\n",
        ".runner/ is ignored by git"
    );
    mock.assert_clean();
}

#[test]
fn stream_json_error_result_has_errors_not_result() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![http_error(401)]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: e\nprompt: hi\n");
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(4);
    let frames = run.json();
    assert_eq!(frames[0]["subtype"], "init");
    let last = frames.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["subtype"], "error_during_execution");
    assert!(last.get("result").is_none(), "{last}");
    assert!(last["errors"][0].as_str().unwrap().contains("401"));
    mock.assert_clean();
}
