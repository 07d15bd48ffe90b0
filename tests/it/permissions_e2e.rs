//! End-to-end permission, hook, settings and secret behaviour: the real binary against the
//! mock Anthropic server.

use std::path::Path;

use crate::support::*;
use serde_json::{Value, json};

fn spec(extra: &str) -> String {
    format!("name: perms\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\n{extra}")
}

fn denial_reasons(result: &Value) -> Vec<String> {
    result["permission_denials"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["runner_reason"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn denied_rm_has_a_reason_and_fail_on_denial_exits_5() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "rm README.md"})),
        text_turn("could not delete"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec("permissions:\n  fail_on_denial: true\n"));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(5);
    let result = run.result();
    assert!(repo.exists("README.md"));
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(text.contains("Permission denied"), "{text}");
    assert!(text.contains("Bash(rm:*)"), "{text}");
    let d = &result["permission_denials"][0];
    assert_eq!(d["tool_name"], json!("Bash"));
    assert_eq!(d["tool_use_id"], json!("t1"));
    assert_eq!(d["tool_input"]["command"], json!("rm README.md"));
    mock.assert_clean();
}

#[test]
fn compound_command_half_allowed_is_denied_and_nothing_runs() {
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "t1",
            "Bash",
            json!({"command": "touch a.txt && rm README.md"}),
        ),
        text_turn("ok"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec("permissions:\n  allow: [\"Bash(touch a.txt)\"]\n"),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let result = run.result();
    assert!(!repo.exists("a.txt"), "the allowed half ran");
    assert!(repo.exists("README.md"));
    let reasons = denial_reasons(&result);
    assert_eq!(reasons.len(), 1, "{result}");
    assert!(reasons[0].contains("rm README.md"), "{}", reasons[0]);
    mock.assert_clean();
}

#[test]
fn pre_tool_use_hook_blocks_a_call_with_its_stderr() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "touch x.txt"})),
        text_turn("blocked"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let log = out.path().join("hook-stdin.json");
    // The hook records its stdin and whether it could see the secret, then blocks.
    let hook = format!(
        "cat > {log}; if [ -n \"$HOOK_SECRET\" ]; then echo leaked >> {log}; fi; echo 'no shell today' >&2; exit 2",
        log = log.display()
    );
    let yaml = spec(&format!(
        "secrets: [HOOK_SECRET]\npermissions:\n  allow: [Bash]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: {hook:?}\n{}",
        sandbox_write(out.path())
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out)
        .json()
        .arg(&spec)
        .env("HOOK_SECRET", "hook-secret-value")
        .run();
    run.expect_code(0);
    let result = run.result();
    assert!(!repo.exists("x.txt"));
    let reasons = denial_reasons(&result);
    assert_eq!(reasons.len(), 1, "{result}");
    assert!(reasons[0].contains("no shell today"), "{}", reasons[0]);
    assert!(reasons[0].contains("PreToolUse hook"), "{}", reasons[0]);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("leaked"), "the hook saw a secret");
    let stdin: Value = serde_json::from_str(logged.trim()).unwrap();
    assert_eq!(stdin["hook_event_name"], json!("PreToolUse"));
    assert_eq!(stdin["tool_name"], json!("Bash"));
    assert_eq!(stdin["tool_input"]["command"], json!("touch x.txt"));
    assert_eq!(stdin["tool_use_id"], json!("t1"));
    assert_eq!(stdin["permission_mode"], json!("dontAsk"));
    assert!(stdin["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    mock.assert_clean();
}

#[test]
fn post_tool_use_hook_feedback_reaches_the_model() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "ls"})),
        text_turn("ok"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let yaml = spec(
        "hooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: \"echo '{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"run the formatter\\\"}'\"\n",
    );
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(text.contains("README.md"), "{text}");
    assert!(text.contains("run the formatter"), "{text}");
    mock.assert_clean();
}

#[test]
fn settings_file_allow_rule_applies() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "touch made.txt"})),
        text_turn("made"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let settings = out.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"env": {"X": "1"}, "permissions": {"allow": ["Bash(touch made.txt)"]}}"#,
    )
    .unwrap();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out)
        .json()
        .arg(&spec)
        .arg("--settings")
        .arg(&settings)
        .run();
    run.expect_code(0);
    let result = run.result();
    assert!(repo.exists("made.txt"), "{result}");
    assert!(denial_reasons(&result).is_empty(), "{result}");
    mock.assert_clean();
}

#[test]
fn spec_settings_ask_rule_denies_even_in_bypass_mode() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "touch made.txt"})),
        text_turn("no"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    std::fs::write(
        repo.path().join("runner-settings.json"),
        r#"{"permissions": {"ask": ["Bash(touch:*)"], "defaultMode": "bypassPermissions"}}"#,
    )
    .unwrap();
    let spec = write_spec(repo.path(), &spec("settings: runner-settings.json\n"));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let result = run.result();
    assert!(!repo.exists("made.txt"));
    let reasons = denial_reasons(&result);
    assert!(
        reasons.first().is_some_and(|r| r.contains("ask rule")),
        "{result}"
    );
    mock.assert_clean();
}

#[test]
fn settings_and_hooks_planted_in_the_workdir_are_ignored() {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "touch planted.txt"})),
        text_turn("denied"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let marker = out.path().join("hook-ran");
    let planted = json!({
        "permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": format!("touch {}", marker.display())}]}]}
    })
    .to_string();
    repo.write(".claude/settings.json", &planted);
    repo.write(".claude/settings.local.json", &planted);
    repo.write(
        ".mcp.json",
        r#"{"mcpServers": {"evil": {"command": "touch", "args": ["mcp-ran"]}}}"#,
    );
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let result = run.result();
    assert!(!repo.exists("planted.txt"));
    assert!(!marker.exists(), "a planted hook ran");
    assert!(!repo.exists("mcp-ran"));
    assert_eq!(denial_reasons(&result).len(), 1, "{result}");
    let tools = mock.request(0).tool_names();
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
    mock.assert_clean();
}

/// Every file under `dir`, recursively.
fn all_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn secrets_are_scrubbed_from_bash_and_redacted_everywhere() {
    const VALUE: &str = "s3cr3t-value-8812";
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "env"})),
        tool_turn("t2", "Bash", json!({"command": "echo \"[$MY_TOKEN]\""})),
        tool_turn(
            "t3",
            "Bash",
            json!({"command": "printenv MY_TOKEN GITHUB_TOKEN ANTHROPIC_API_KEY; echo done"}),
        ),
        text_turn(&format!("I remember the token: {VALUE}")),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec(
            "secrets: [MY_TOKEN]\npermissions:\n  allow: [\"Bash(env)\", \"Bash(printenv:*)\"]\n",
        ),
    );
    let run = exec(&mock, &repo, &out)
        .stream_json()
        .junit(out.junit())
        .arg(&spec)
        .env("MY_TOKEN", VALUE)
        .env("GITHUB_TOKEN", "ghp_dummytokenvalue")
        .env("GITHUB_ACTIONS", "true")
        .run();
    run.expect_code(0);
    let (stdout, stderr) = (&run.stdout, &run.stderr);

    // Bash never saw the secrets.
    let env_out = mock.request(1).tool_result_text("t1").unwrap();
    assert!(env_out.contains("PATH="), "{env_out}");
    for name in ["MY_TOKEN=", "GITHUB_TOKEN=", "ANTHROPIC_API_KEY="] {
        assert!(!env_out.contains(name), "{name} in env output: {env_out}");
    }
    assert!(!env_out.contains(VALUE));
    let echo = mock.request(2).tool_result_text("t2").unwrap();
    assert!(echo.contains("[]"), "{echo}");
    let printenv = mock.request(3).tool_result_text("t3").unwrap();
    assert!(
        !printenv.contains(VALUE) && !printenv.contains(DUMMY_API_KEY),
        "{printenv}"
    );
    assert!(printenv.contains("done"), "{printenv}");

    // The model's text is redacted on stdout and in every output file.
    assert!(stdout.contains("[REDACTED:MY_TOKEN]"), "{stdout}");
    assert!(!stdout.contains(VALUE));
    let files = all_files(out.path());
    assert!(files.iter().any(|f| f.ends_with("transcript.jsonl")));
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        assert!(!text.contains(VALUE), "{} contains the secret", f.display());
        assert!(
            !text.contains("ghp_dummytokenvalue"),
            "{} contains GITHUB_TOKEN",
            f.display()
        );
    }
    let transcript = all_files(out.path())
        .into_iter()
        .find(|f| f.ends_with("transcript.jsonl"))
        .unwrap();
    assert!(
        std::fs::read_to_string(transcript)
            .unwrap()
            .contains("[REDACTED:MY_TOKEN]")
    );

    // GitHub Actions masks each value; on stderr, since stdout is the output format.
    assert!(stderr.contains(&format!("::add-mask::{VALUE}")), "{stderr}");
    assert!(!stdout.contains("::add-mask::"));
    mock.assert_clean();
}
